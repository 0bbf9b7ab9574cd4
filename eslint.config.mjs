import { config } from '@n8n/node-cli/eslint';

// n8n's community-node rules are for what the n8n package ships; the Zapier app (zapier/) and its
// tests are not part of it (they are type-checked strictly by `npm run typecheck`).
export default [{ ignores: ['zapier/**', 'test/zapier/**', 'test/support/zapier/**'] }, ...config];
