/** Jest runs every suite under test/ with ts-jest against the dev tsconfig. */
module.exports = {
  testEnvironment: 'node',
  // The Activepieces piece's and the MCP server's tests sit beside them, where their own node_modules resolve.
	roots: ['<rootDir>/test', '<rootDir>/activepieces/test', '<rootDir>/mcp/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.dev.json' }],
  },
  // The n8n engine tests load the built package, the Activepieces tests the built piece: each is built first when missing or stale.
  globalSetup: '<rootDir>/test/support/globalSetup.ts',
  // Removes the run's temporary folder, which globalSetup makes.
  globalTeardown: '<rootDir>/test/support/globalTeardown.ts',
  testTimeout: 30000,
};
