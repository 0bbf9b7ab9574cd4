/* eslint-disable @n8n/community-nodes/no-restricted-globals -- test setup, never shipped */
/**
 * jest.spec.config.js runs every suite it selects on the strictest reading of the spec: each
 * sandbox started without a `service` of its own takes the `spec` profile (sandbox/service.ts).
 */
process.env.OMNI_SANDBOX_SERVICE = 'spec';
