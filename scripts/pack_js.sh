#!/usr/bin/env bash
# Packs the WebAssembly engine as the npm package `attnlab` into build-js/attnlab-<version>.tgz.
#
#   scripts/build_wasm.sh threads single && scripts/pack_js.sh
#   npm install /path/to/build-js/attnlab-<version>.tgz      # in any project; no dependencies
#
# The package is assembled in build-js/attnlab/ from one source per file, copied at pack time:
#   packages/attnlab/{package.json,README.md}   package metadata and the user's guide
#   web/<f> for each f in package.json's files  the loader (engine/loader.mjs), the declarations
#                                               (attnlab.d.ts and generated/types.d.ts, which
#                                               scripts/build_wasm.sh writes), the built modules (wasm/threads/,
#                                               wasm/single/, each with its {"type": "commonjs"}
#                                               package.json: the pthread worker is a classic script)
# The version comes from the CMake project (CMakeLists.txt), the one place it is written.
# The last line printed is the tarball's path.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out="$root/build-js"
stage="$out/attnlab"
command -v npm >/dev/null || { echo "pack_js: npm not found (Node 20 + npm are needed)" >&2; exit 1; }

version=$(sed -nE 's/^project\(attnlab VERSION ([0-9]+\.[0-9]+\.[0-9]+).*/\1/p' "$root/CMakeLists.txt")
[[ -n "$version" ]] || { echo "pack_js: no 'project(attnlab VERSION x.y.z' line in CMakeLists.txt" >&2; exit 1; }

# The shipped files are the package.json's `files`; each is web/<the same path>.
mapfile -t files < <(node -e 'for (const f of require(process.argv[1]).files) console.log(f)' "$root/packages/attnlab/package.json")
(( ${#files[@]} )) || { echo "pack_js: packages/attnlab/package.json lists no files" >&2; exit 1; }
for f in "${files[@]}"; do
  if [[ ! -f "$root/web/$f" ]]; then
    echo "pack_js: web/$f is missing: run scripts/build_wasm.sh threads single first" >&2
    exit 1
  fi
done

rm -rf "$stage"
mkdir -p "$stage"
cp "$root/packages/attnlab/README.md" "$stage/"
for f in "${files[@]}"; do
  mkdir -p "$stage/$(dirname "$f")"
  cp "$root/web/$f" "$stage/$f"
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
