// tests/wasm/figure_modules.mjs: the chapters' figure computations (web/src/chapters/figures/
// *.compute.ts, which run in the page's engine worker) made runnable in Node for the tests of
// tests/wasm/: the module and what it imports are bundled from the TypeScript sources by the
// page's own bundler (rolldown, under Vite in web/node_modules; types dropped, nothing checked:
// `tsc` checks them in the page's build) into temporary ES modules, built together so that the
// modules they share (the shipped models held by shipped.compute.ts) are one.
//
//   const [{ context }, { holdShipped }] = await importFigureModules(['chapters/figures/context.compute.ts', 'chapters/figures/shipped.compute.ts']);
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

import { ROOT } from './harness.mjs';

const OUT = fs.mkdtempSync(path.join(os.tmpdir(), 'attnlab-figures-'));
process.on('exit', () => fs.rmSync(OUT, { recursive: true, force: true }));

async function bundler() {
  const require = createRequire(path.join(ROOT, 'web/package.json'));
  try {
    return await import(pathToFileURL(require.resolve('rolldown')).href);
  } catch {
    throw new Error('web/node_modules has no rolldown: run scripts/build_web.sh (npm ci) first');
  }
}

/**
 * The modules web/src/<rel> (TypeScript), bundled with their imports and loaded, in order; each
 * `copy` is a separate instance of them (module state not shared with another copy).
 */
export async function importFigureModules(rels, copy = 'a') {
  const { build } = await bundler();
  const name = (rel) => `${copy}_${rel.replace(/[/.]/g, '_')}`;
  const input = Object.fromEntries(rels.map((rel) => [name(rel), path.join(ROOT, 'web/src', rel)]));
  await build({ input, output: { dir: OUT, format: 'esm', entryFileNames: '[name].mjs', chunkFileNames: `${copy}_[name]-[hash].mjs` }, write: true, logLevel: 'warn' });
  return Promise.all(rels.map((rel) => import(pathToFileURL(path.join(OUT, `${name(rel)}.mjs`)).href)));
}
