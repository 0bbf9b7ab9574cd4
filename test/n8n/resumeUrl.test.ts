import { callbackUrlOf, resumeUrlOfExecution } from '../../nodes/OmniVideo/actions/video/resumeUrl';

// n8n 2.14+ puts a resume token in the resume URL's query; before, the URL has none.
const TOKEN = 'a'.repeat(64);

describe('callback URLs under the resume URL', () => {
	it('puts our path in the URL path and keeps every query parameter n8n put there', () => {
		const url = new URL(callbackUrlOf(`https://n8n.example.com/webhook-waiting/6?signature=${TOKEN}`, 3));
		expect(url.pathname).toBe('/webhook-waiting/6/omni-video');
		expect(url.searchParams.get('signature')).toBe(TOKEN);
		expect(url.searchParams.get('row')).toBe('3');
	});

	it('is unchanged on an n8n without resume tokens', () => {
		expect(callbackUrlOf('http://127.0.0.1:5678/webhook-waiting/6', 0)).toBe('http://127.0.0.1:5678/webhook-waiting/6/omni-video?row=0');
	});

	it("names another execution (a retry's origin) with the query kept", () => {
		expect(resumeUrlOfExecution(`https://n8n.example.com/webhook-waiting/9?signature=${TOKEN}`, '6')).toBe(`https://n8n.example.com/webhook-waiting/6?signature=${TOKEN}`);
		expect(resumeUrlOfExecution('https://n8n.example.com/sub/webhook-waiting/9', '6')).toBe('https://n8n.example.com/sub/webhook-waiting/6');
	});
});
