#!/usr/bin/env node
// Exports OpenCC's character tables (TSCharacters: traditional -> simplified, STCharacters:
// simplified -> traditional; Apache-2.0, as shipped in the opencc-js npm package pinned in
// data/package.json) to data/derived/opencc_chars.txt in the text form attnlab's
// ScriptConverter reads (include/attnlab/text/script.hpp): "t2s T S" and "s2t S T" lines, the
// first candidate of each entry. Run by scripts/fetch_data.sh; the output is data, never committed.
//
//   node scripts/export_opencc.mjs [data/node_modules] [data/derived/opencc_chars.txt]
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const modules = path.resolve(process.argv[2] ?? path.join(root, 'data/node_modules'));
const out = path.resolve(process.argv[3] ?? path.join(root, 'data/derived/opencc_chars.txt'));
const dict = path.join(modules, 'opencc-js/dist/esm-lib/dict');

async function table(name) {
  const file = path.join(dict, `${name}.js`);
  if (!fs.existsSync(file)) throw new Error(`export_opencc: ${file} is missing (run scripts/fetch_data.sh)`);
  return (await import(pathToFileURL(file).href)).default;
}

function entries(text, kind) {
  const lines = [];
  for (const entry of text.split('|')) {
    const [from, first] = entry.split(' ');
    if (!from || !first || [...from].length !== 1 || [...first].length !== 1 || from === first) continue;
    lines.push(`${kind} ${from} ${first}`);
  }
  return lines;
}

const header = '# OpenCC character tables (TSCharacters, STCharacters), Apache-2.0, from opencc-js; first candidates';
const lines = [header, ...entries(await table('TSCharacters'), 't2s'), ...entries(await table('STCharacters'), 's2t')];
fs.mkdirSync(path.dirname(out), { recursive: true });
fs.writeFileSync(out, lines.join('\n') + '\n');
console.log(`export_opencc: ${lines.length - 1} entries in ${out}`);
