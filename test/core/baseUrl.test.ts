import { baseUrlProblem, normaliseBaseUrl } from '../../core/http/baseUrl';

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

describe('baseUrlProblem', () => {
	it('takes an https:// address alone, and http:// only for the sandbox on loopback', () => {
		for (const good of ['https://api.omni.example', 'https://api.omni.example:8443', 'http://127.0.0.1:4010', 'http://localhost:4010']) {
			expect(baseUrlProblem(good)).toBeUndefined();
		}
	});

	it('says what to enter instead, for each kind of wrong address', () => {
		expect(baseUrlProblem('api.omni.example')).toMatch(/address of your Omni Video API/);
		expect(baseUrlProblem('https://gateway.example/omni')).toMatch(/without a path: https:\/\/gateway.example rather than/);
		expect(baseUrlProblem('http://api.omni.example')).toMatch(/must start with https:\/\/ \(your key would travel unencrypted\)/);
	});
});
