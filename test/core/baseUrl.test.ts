import { normaliseBaseUrl } from '../../core/baseUrl';

describe('normaliseBaseUrl', () => {
	it('keeps the address alone: spaces, trailing slashes and a pasted /api/v1 or /api go', () => {
		for (const entered of [
			'https://api.omni.example',
			' https://api.omni.example/ ',
			'https://api.omni.example/api/v1',
			'https://api.omni.example/api/v1/',
			'https://api.omni.example/API/V1',
			'https://api.omni.example/api',
		]) {
			expect(normaliseBaseUrl(entered)).toBe('https://api.omni.example');
		}
	});

	it('leaves other paths for the caller to judge', () => {
		expect(normaliseBaseUrl('https://gateway.example/omni/')).toBe('https://gateway.example/omni');
		expect(normaliseBaseUrl('https://gateway.example/api/v2')).toBe('https://gateway.example/api/v2');
	});
});
