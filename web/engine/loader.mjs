// web/engine/loader.mjs: loads the attnlab WebAssembly module, picking the flavour at run time.
//
// What it is for: one entry point for pages, Workers and Node. The threaded build needs
// SharedArrayBuffer, which browsers only give to cross-origin-isolated pages (COOP/COEP headers);
// everywhere else the single-threaded build runs. In Node the threaded build always works.
// Not for: building (scripts/build_wasm.sh) or anything engine-specific.
//
//   import { loadAttnLab } from './engine/loader.mjs';
//   const lab = await loadAttnLab();                       // or { flavour: 'single' }
//   lab.buildInfo();                                       // { version, simd, threads, flavour, ... }
//   ...
//   unloadAttnLab(lab);                                    // Node: stop the pthread Workers so the process can exit

export const FLAVOURS = ['threads', 'single', 'scalar'];

const isNode = typeof process === 'object' && typeof process.versions?.node === 'string';

// 'threads' where SharedArrayBuffer is usable (Node, cross-origin-isolated pages), else 'single'.
export function pickFlavour() {
  if (isNode) return 'threads';
  return globalThis.crossOriginIsolated && typeof SharedArrayBuffer !== 'undefined' ? 'threads' : 'single';
}

// flavour: 'threads' | 'single' | 'scalar' (default: pickFlavour()).
// baseUrl: folder holding <flavour>/attnlab.mjs (default: web/wasm/ next to this file).
export async function loadAttnLab({ flavour = pickFlavour(), baseUrl = new URL('../wasm/', import.meta.url) } = {}) {
  if (!FLAVOURS.includes(flavour)) {
    throw new Error(`loadAttnLab: unknown flavour '${flavour}' (valid: ${FLAVOURS.join(', ')})`);
  }
  const dir = new URL(`${flavour}/`, baseUrl);
  const moduleUrl = new URL('attnlab.mjs', dir);
  if (!isNode) {
    const { default: createAttnLab } = await import(moduleUrl.href);
    return createAttnLab();
  }

  // Emscripten 3.1.6's ES module output still calls require() and reads __dirname in Node, and
  // Node 20's fetch cannot load the .wasm from a file path: hand it the bytes instead.
  const [{ createRequire }, { readFile, access }, { fileURLToPath }] = await Promise.all([
    import('node:module'), import('node:fs/promises'), import('node:url'),
  ]);
  const dirPath = fileURLToPath(dir);
  try {
    await access(fileURLToPath(moduleUrl));
  } catch {
    throw new Error(`loadAttnLab: ${fileURLToPath(moduleUrl)} not found; build it with scripts/build_wasm.sh ${flavour}`);
  }
  globalThis.require ??= createRequire(import.meta.url);
  globalThis.__dirname = dirPath;
  const wasmBinary = await readFile(new URL('attnlab.wasm', dir));
  const { default: createAttnLab } = await import(moduleUrl.href);
  return createAttnLab({ wasmBinary, locateFile: (file) => dirPath + file });
}

// Stops the module's pthread Workers (threads flavour), which otherwise keep Node running.
// The module must not be used afterwards.
export function unloadAttnLab(lab) {
  lab?.PThread?.terminateAllThreads();
}
