import vector from '../fixtures/webhook-test-vector.json';
import { signWebhook, verifyWebhookSignature } from '../../core/callbacks/signature';

const SECRET = vector.secret;
const ID = vector.id;
const TS = vector.timestamp;
const BODY = vector.body;
const EXPECTED = vector.signature;
const headers = (signature = EXPECTED) => ({ 'webhook-id': ID, 'webhook-timestamp': String(TS), 'webhook-signature': signature });

describe('Standard Webhooks signatures', () => {
	it('matches the contract test vector', () => {
		expect(signWebhook(SECRET, ID, TS, BODY)).toBe(EXPECTED);
		expect(verifyWebhookSignature({ secret: SECRET, headers: headers(), rawBody: BODY, nowMs: TS * 1000 })).toEqual({
			ok: true,
			webhookId: ID,
			timestampSeconds: TS,
		});
	});

	it('refuses a tampered body', () => {
		const result = verifyWebhookSignature({ secret: SECRET, headers: headers(), rawBody: BODY.replace('succeeded', 'failed'), nowMs: TS * 1000 });
		expect(result).toMatchObject({ ok: false, reason: expect.stringContaining('no signature matches') });
	});

	it('refuses a tampered signature and a wrong secret', () => {
		expect(verifyWebhookSignature({ secret: SECRET, headers: headers(`v1,V${EXPECTED.slice(4)}`), rawBody: BODY, nowMs: TS * 1000 }).ok).toBe(false);
		expect(verifyWebhookSignature({ secret: `whsec_${Buffer.from('another secret').toString('base64')}`, headers: headers(), rawBody: BODY, nowMs: TS * 1000 }).ok).toBe(false);
	});

	it('accepts one matching signature among several, and only v1 ones', () => {
		const several = `v1,bm9wZQ== v2,${EXPECTED.slice(3)} ${EXPECTED}`;
		expect(verifyWebhookSignature({ secret: SECRET, headers: headers(several), rawBody: BODY, nowMs: TS * 1000 }).ok).toBe(true);
		expect(verifyWebhookSignature({ secret: SECRET, headers: headers(`v2,${EXPECTED.slice(3)}`), rawBody: BODY, nowMs: TS * 1000 }).ok).toBe(false);
	});

	it('refuses deliveries older or newer than five minutes', () => {
		expect(verifyWebhookSignature({ secret: SECRET, headers: headers(), rawBody: BODY, nowMs: (TS + 301) * 1000 })).toMatchObject({ ok: false, reason: expect.stringContaining('old') });
		expect(verifyWebhookSignature({ secret: SECRET, headers: headers(), rawBody: BODY, nowMs: (TS - 301) * 1000 })).toMatchObject({ ok: false, reason: expect.stringMatching(/future|ahead|new/) });
		expect(verifyWebhookSignature({ secret: SECRET, headers: headers(), rawBody: BODY, nowMs: (TS + 299) * 1000 }).ok).toBe(true);
	});

	it('refuses missing headers and a non-numeric timestamp', () => {
		expect(verifyWebhookSignature({ secret: SECRET, headers: {}, rawBody: BODY, nowMs: TS * 1000 }).ok).toBe(false);
		expect(verifyWebhookSignature({ secret: SECRET, headers: { ...headers(), 'webhook-timestamp': 'soon' }, rawBody: BODY, nowMs: TS * 1000 }).ok).toBe(false);
	});

	it('reads header names in any case and repeated values', () => {
		const mixed = { 'Webhook-Id': ID, 'WEBHOOK-TIMESTAMP': String(TS), 'Webhook-Signature': ['v1,bm9wZQ==', EXPECTED] };
		expect(verifyWebhookSignature({ secret: SECRET, headers: mixed, rawBody: BODY, nowMs: TS * 1000 }).ok).toBe(true);
	});
});
