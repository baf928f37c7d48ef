// web/engine/loader.mjs: loads the attnlab WebAssembly module, picking the flavour at run time.
//
// What it is for: one entry point for pages, Workers, bundlers and Node (it is also the main entry
// of the npm package, packages/attnlab/). The threaded build needs SharedArrayBuffer, which
// browsers only give to cross-origin-isolated pages (COOP/COEP headers); everywhere else the
// single-threaded build runs. In Node the threaded build always works.
// Not for: building (scripts/build_wasm.sh) or anything engine-specific.
//
//   import { loadAttnLab } from './engine/loader.mjs';
//   const lab = await loadAttnLab();                       // or { flavour: 'single' }
//   lab.buildInfo();                                       // { version, simd, threads, flavour, ... }
//   ...
//   unloadAttnLab(lab);                                    // Node: stop the pthread Workers so the process can exit

export const FLAVOURS = ['threads', 'single', 'scalar'];

const isNode = typeof process === 'object' && typeof process.versions?.node === 'string';

// The built files of the shipped flavours, each written as a literal `new URL('...', import.meta.url)`:
// that is the form bundlers (Vite; webpack 5 too) recognise, so a bundled page gets the files
// emitted as assets and these URLs rewritten to wherever (and under whatever hashed name) they land.
// The files are then no longer next to each other, hence locateFile and mainScriptUrlOrBlob below.
// `?no-inline` keeps Vite from turning the 3 KB worker into a data: URL (a Worker started from one
// runs in an opaque origin and fails to import the module); Vite drops the query from the built URL.
// The scalar flavour (benchmarks only, never shipped) has no entry: it is found through baseUrl.
const BUILT = {
  threads: () => ({
    module: new URL('../wasm/threads/attnlab.mjs', import.meta.url),
    wasm: new URL('../wasm/threads/attnlab.wasm', import.meta.url),
    worker: new URL('../wasm/threads/attnlab.worker.js?no-inline', import.meta.url),
  }),
  single: () => ({
    module: new URL('../wasm/single/attnlab.mjs', import.meta.url),
    wasm: new URL('../wasm/single/attnlab.wasm', import.meta.url),
  }),
};

// 'threads' where SharedArrayBuffer is usable (Node, cross-origin-isolated pages), else 'single'.
export function pickFlavour() {
  if (isNode) return 'threads';
  return globalThis.crossOriginIsolated && typeof SharedArrayBuffer !== 'undefined' ? 'threads' : 'single';
}

// { module, wasm, worker? } URLs of one flavour: from the table above, or <baseUrl><flavour>/*.
function builtFiles(flavour, baseUrl) {
  if (baseUrl === undefined && BUILT[flavour]) return BUILT[flavour]();
  // Ignored by Vite: ../wasm/ is a folder, not a file for the bundler to emit.
  const dir = new URL(`${flavour}/`, baseUrl ?? new URL(/* @vite-ignore */ '../wasm/', import.meta.url));
  const at = (file) => new URL(file, dir);
  return { module: at('attnlab.mjs'), wasm: at('attnlab.wasm'), worker: flavour === 'threads' ? at('attnlab.worker.js') : undefined };
}

// flavour: 'threads' | 'single' | 'scalar' (default: pickFlavour()).
// baseUrl: folder holding <flavour>/attnlab.mjs (default: web/wasm/ next to this file).
export async function loadAttnLab({ flavour = pickFlavour(), baseUrl } = {}) {
  if (!FLAVOURS.includes(flavour)) {
    throw new Error(`loadAttnLab: unknown flavour '${flavour}' (valid: ${FLAVOURS.join(', ')})`);
  }
  const files = builtFiles(flavour, baseUrl);
  // Emscripten asks locateFile for the .wasm and the pthread worker; the worker imports the module
  // from mainScriptUrlOrBlob.
  const located = { 'attnlab.wasm': files.wasm.href, 'attnlab.worker.js': files.worker?.href };
  const locate = (file) => located[file] ?? new URL(file, files.module).href;
  if (!isNode) {
    const { default: createAttnLab } = await import(/* @vite-ignore */ /* webpackIgnore: true */ files.module.href);
    return createAttnLab({ locateFile: locate, mainScriptUrlOrBlob: files.module.href });
  }

  // Emscripten 3.1.6's ES module output still calls require() and reads __dirname in Node, and
  // Node 20's fetch cannot load the .wasm from a file path: hand it the bytes instead.
  // Node's modules are imported by a name held in a variable: a bundler building a page would try
  // to resolve a literal import('node:...') for the browser.
  const builtin = (name) => import(/* @vite-ignore */ /* webpackIgnore: true */ name);
  const [{ createRequire }, { readFile, access }, { fileURLToPath }] = await Promise.all(
    ['node:module', 'node:fs/promises', 'node:url'].map(builtin));
  const modulePath = fileURLToPath(files.module);
  try {
    await access(modulePath);
  } catch {
    throw new Error(`loadAttnLab: ${modulePath} not found; build it with scripts/build_wasm.sh ${flavour}`);
  }
  globalThis.require ??= createRequire(import.meta.url);
  globalThis.__dirname = fileURLToPath(new URL('.', files.module));
  const wasmBinary = await readFile(files.wasm);
  const { default: createAttnLab } = await import(files.module.href);
  return createAttnLab({ wasmBinary, locateFile: (file) => fileURLToPath(locate(file)), mainScriptUrlOrBlob: files.module.href });
}

// Stops the module's pthread Workers (threads flavour), which otherwise keep Node running.
// The module must not be used afterwards.
export function unloadAttnLab(lab) {
  lab?.PThread?.terminateAllThreads();
}
