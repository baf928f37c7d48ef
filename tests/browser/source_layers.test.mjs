// The page's source keeps its layers (docs/architecture.md, "The page"): web/src/engine/protocol/
// is plain data shared by the page and the engine worker and imports nothing else of the page but
// the figures' message types (and the engine's generated tables, web/generated/); the worker (engine/worker/ and the figures' computations,
// chapters/figures/*.compute.ts) imports only the protocol, the pure utilities and other worker
// code, never the page's views, components or texts; the page imports nothing but types from worker
// code (the client starts the worker by URL); and no module imports itself through others. Runs in
// Node from the sources, without the page's build.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const web = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'web');
const src = join(web, 'src');

function sources(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

/** Each module (path relative to web/, without .ts) and the modules it imports (type imports too). */
const graph = new Map();
/** The modules each module imports values from (not only types: those reach the bundle). */
const valueDeps = new Map();
for (const file of sources(src)) {
  const text = readFileSync(file, 'utf8');
  const imports = [...text.matchAll(/^(import|export)(\s+type)?\b[^;]*?\bfrom\s+'(\.[^']+)'/gms)].map((m) => ({
    module: relative(web, normalize(join(dirname(file), m[3]))).replace(/\.ts$/, ''),
    typeOnly: Boolean(m[2]),
  }));
  const name = relative(web, file).replace(/\.ts$/, '');
  graph.set(name, imports.map((i) => i.module));
  valueDeps.set(name, imports.filter((i) => !i.typeOnly).map((i) => i.module));
}

const isProtocol = (m) => m.startsWith('src/engine/protocol/');
const isWorker = (m) => m.startsWith('src/engine/worker/') || /^src\/chapters\/figures\/.*\.compute$/.test(m) || m === 'src/chapters/figures/computations';
/** The engine's tables as plain data (web/generated/, written from the built module by scripts/gen_types.mjs). */
const ENGINE_TABLES = new Set(['generated/choices.mjs']);
/**
 * What worker code may use besides the protocol and itself: the engine's declarations and tables,
 * and pure helpers (the seeded RNG; §8's reference layer, plain JavaScript arithmetic).
 */
const WORKER_MAY_USE = new Set(['attnlab', ...ENGINE_TABLES, 'src/util/rng', 'src/chapters/figures/reference_layer.mjs']);

test('the import graph was read', () => {
  assert.ok(graph.size > 50, `${graph.size} modules`);
  assert.ok(graph.get('src/main')?.length > 5, 'main.ts imports the views');
});

test('the shared protocol imports only the protocol, the engine declarations and tables and the figures\' message types', () => {
  // The figures' requests and answers are declared by their computations (one module per figure).
  const types = new Set(['attnlab', ...ENGINE_TABLES, 'src/chapters/figures/computations']);
  const bad = [...graph].flatMap(([m, deps]) => (isProtocol(m) ? deps.filter((d) => !isProtocol(d) && !types.has(d)).map((d) => `${m} -> ${d}`) : []));
  const values = [...valueDeps].flatMap(([m, deps]) => (isProtocol(m) ? deps.filter((d) => !isProtocol(d) && !d.endsWith('.json') && !ENGINE_TABLES.has(d)).map((d) => `${m} -> ${d} (a value)`) : []));
  assert.deepEqual([...bad, ...values], []);
});

test('worker code imports only the protocol, pure helpers and other worker code', () => {
  const bad = [...graph].flatMap(([m, deps]) => (isWorker(m) ? deps.filter((d) => !isProtocol(d) && !isWorker(d) && !WORKER_MAY_USE.has(d) && !d.endsWith('.json')).map((d) => `${m} -> ${d}`) : []));
  assert.deepEqual(bad, []);
});

test('the page never imports worker code (types only)', () => {
  const bad = [...valueDeps].flatMap(([m, deps]) => (!isWorker(m) ? deps.filter(isWorker).map((d) => `${m} -> ${d}`) : []));
  assert.deepEqual(bad, []);
});

test('no import cycle', () => {
  const cycles = [];
  const state = new Map(); // 1: on the path, 2: done
  const visit = (m, path) => {
    if (state.get(m) === 2 || !graph.has(m)) return;
    if (state.get(m) === 1) {
      cycles.push([...path.slice(path.indexOf(m)), m].join(' -> '));
      return;
    }
    state.set(m, 1);
    for (const d of graph.get(m)) visit(d, [...path, m]);
    state.set(m, 2);
  };
  for (const m of graph.keys()) visit(m, []);
  assert.deepEqual(cycles, []);
});
