import { cloudSupportEnabled } from '../../tools/cloudSupport';

describe('reading n8n-node cloud-support', () => {
	// What n8n-node 0.48 prints under CI=true through a pipe: the verdict's word is coloured.
	const coloured = (word: string): string =>
		`\u001b[90m┌\u001b[39m  n8n-node cloud-support\n\u001b[32m◆\u001b[39m  ✅ Cloud support is \u001b[32m${word}\u001b[39m\n`;

	it('reads ENABLED through the colour codes', () => {
		expect(cloudSupportEnabled(coloured('ENABLED'))).toBe(true);
	});

	it('reads DISABLED as not eligible, coloured or plain', () => {
		expect(cloudSupportEnabled(coloured('DISABLED'))).toBe(false);
		expect(cloudSupportEnabled('Cloud support is DISABLED')).toBe(false);
	});
});
