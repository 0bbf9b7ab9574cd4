/** Jest runs every suite under test/ with ts-jest against the dev tsconfig. */
module.exports = {
  testEnvironment: 'node',
  // The Activepieces piece's tests sit beside it, where its own node_modules resolve.
	roots: ['<rootDir>/test', '<rootDir>/activepieces/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.dev.json' }],
  },
  // The n8n engine tests load the built package: build it first when it is missing or stale.
  globalSetup: '<rootDir>/test/support/n8n/globalSetup.ts',
  testTimeout: 30000,
};
