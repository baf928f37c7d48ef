#!/usr/bin/env bash
# Packs the WebAssembly engine as the npm package `attnlab` into build-js/attnlab-<version>.tgz.
#
#   scripts/build_wasm.sh threads single && scripts/pack_js.sh
#   npm install /path/to/build-js/attnlab-0.1.0.tgz          # in any project; no dependencies
#
# The package is assembled in build-js/attnlab/ from one source per file, copied at pack time:
#   packages/attnlab/{package.json,README.md}     package metadata and the user's guide
#   web/engine/loader.mjs -> engine/loader.mjs    the entry point (finds ../wasm/<flavour>/)
#   web/attnlab.d.ts      -> attnlab.d.ts         the declarations
#   web/wasm/{threads,single}/ -> wasm/...        the built modules, each folder with its
#                                                 {"type": "commonjs"} package.json (the pthread
#                                                 worker is a classic script)
# The version comes from the CMake project (CMakeLists.txt), the one place it is written.
# The last line printed is the tarball's path.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out="$root/build-js"
stage="$out/attnlab"
command -v npm >/dev/null || { echo "pack_js: npm not found (Node 20 + npm are needed)" >&2; exit 1; }

version=$(sed -nE 's/^project\(attnlab VERSION ([0-9]+\.[0-9]+\.[0-9]+).*/\1/p' "$root/CMakeLists.txt")
[[ -n "$version" ]] || { echo "pack_js: no 'project(attnlab VERSION x.y.z' line in CMakeLists.txt" >&2; exit 1; }

declare -A wasm_files=(
  [threads]="attnlab.mjs attnlab.wasm attnlab.worker.js package.json"
  [single]="attnlab.mjs attnlab.wasm package.json"
)
for flavour in threads single; do
  for f in ${wasm_files[$flavour]}; do
    if [[ ! -f "$root/web/wasm/$flavour/$f" ]]; then
      echo "pack_js: web/wasm/$flavour/$f is missing: run scripts/build_wasm.sh threads single first" >&2
      exit 1
    fi
  done
done

rm -rf "$stage"
mkdir -p "$stage/engine"
cp "$root/packages/attnlab/README.md" "$stage/"
cp "$root/web/engine/loader.mjs" "$stage/engine/"
cp "$root/web/attnlab.d.ts" "$stage/"
for flavour in threads single; do
  mkdir -p "$stage/wasm/$flavour"
  for f in ${wasm_files[$flavour]}; do cp "$root/web/wasm/$flavour/$f" "$stage/wasm/$flavour/"; done
done
VERSION="$version" node -e '
  const fs = require("node:fs");
  const [from, to] = process.argv.slice(1);
  const pkg = JSON.parse(fs.readFileSync(from, "utf8"));
  // name, version first, as npm writes them
  const { name, ...rest } = pkg;
  fs.writeFileSync(to, JSON.stringify({ name, version: process.env.VERSION, ...rest }, null, 2) + "\n");
' "$root/packages/attnlab/package.json" "$stage/package.json"

rm -f "$out/attnlab-$version.tgz"
(cd "$stage" && npm pack --silent --pack-destination "$out" >/dev/null)
echo "pack_js: attnlab $version ($(du -k "$out/attnlab-$version.tgz" | cut -f1) KB)"
echo "$out/attnlab-$version.tgz"
