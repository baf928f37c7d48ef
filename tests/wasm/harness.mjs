// tests/wasm/harness.mjs: shared set-up for the Node tests of the WebAssembly module (not a test
// file itself: `node --test 'tests/wasm/*.test.mjs'` only runs *.test.mjs).
//
//   import { loadLab, readFixture, maxAbsDiff } from './harness.mjs';
//   const lab = await loadLab('threads');           // cached per flavour; Workers stopped at exit
//   const fx = readFixture('mha_basic');            // { tensors: { x: {shape, data, dtype}, ... }, metadata }
import { after } from 'node:test';
import { setImmediate as tick } from 'node:timers/promises';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { loadAttnLab, unloadAttnLab } from '../../web/engine/loader.mjs';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const FIXTURE_DIR = path.join(ROOT, 'tests/reference/fixtures');
export const FLAVOURS = ['threads', 'single'];

const loaded = new Map();

// The module of one flavour, loaded once per test file. Its pthread Workers are terminated when
// the file's tests are done, so Node can exit.
export async function loadLab(flavour) {
  if (!loaded.has(flavour)) loaded.set(flavour, loadAttnLab({ flavour }));
  return loaded.get(flavour);
}

after(async () => {
  for (const lab of loaded.values()) unloadAttnLab(await lab);
  loaded.clear();
});

// ---- safetensors ---------------------------------------------------------------------------
// u64 LE header length N, N bytes of JSON {name: {dtype, shape, data_offsets}, __metadata__},
// then the data buffer. Only the dtypes the fixtures use.
const DTYPES = { F32: Float32Array, U8: Uint8Array, I32: Int32Array, BOOL: Uint8Array };

export function parseSafetensors(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = Number(view.getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
  const metadata = header.__metadata__ ?? {};
  delete header.__metadata__;
  const tensors = {};
  for (const [name, { dtype, shape, data_offsets: [begin, end] }] of Object.entries(header)) {
    const Type = DTYPES[dtype];
    if (!Type) throw new Error(`parseSafetensors: tensor '${name}' has unsupported dtype ${dtype}`);
    const raw = bytes.slice(8 + n + begin, 8 + n + end);  // a copy, aligned at 0
    tensors[name] = { dtype, shape, data: new Type(raw.buffer, 0, (end - begin) / Type.BYTES_PER_ELEMENT) };
  }
  return { tensors, metadata };
}

export function readFixture(name) {
  return parseSafetensors(new Uint8Array(fs.readFileSync(path.join(FIXTURE_DIR, `${name}.safetensors`))));
}

export function fixtureNames() {
  return fs.readdirSync(FIXTURE_DIR).filter((f) => f.endsWith('.safetensors')).map((f) => f.slice(0, -12)).sort();
}

// ---- tensors -------------------------------------------------------------------------------

export const tensor = (shape, data) => ({ shape, data: data instanceof Float32Array ? data : Float32Array.from(data) });

// Deterministic pseudo-random tensor in [-1, 1).
export function randomTensor(shape, seed = 1) {
  let s = seed >>> 0 || 1;
  const n = shape.reduce((a, b) => a * b, 1);
  const data = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0;
    data[i] = (s / 2 ** 32) * 2 - 1;
  }
  return { shape, data };
}

// { max, index } of |a - b| over two equally long arrays.
export function maxAbsDiff(a, b) {
  if (a.length !== b.length) throw new Error(`maxAbsDiff: lengths differ (${a.length} vs ${b.length})`);
  let max = 0, index = -1;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(a[i] - b[i]);
    if (!(d <= max)) { max = d; index = i; }   // NaN counts as a difference
  }
  return { max, index };
}

// The (rows, cols) slice [i0, i1, ...] of a row-major tensor {shape, data} with leading indices.
export function sliceMatrix(t, ...lead) {
  const rows = t.shape[lead.length], cols = t.shape[lead.length + 1];
  let offset = 0;
  for (let i = 0; i < lead.length; i++) offset = offset * t.shape[i] + lead[i];
  offset *= rows * cols;
  return { shape: [rows, cols], data: t.data.subarray(offset, offset + rows * cols) };
}

// Builds a MultiHeadAttention from a fixture: config from the metadata, every projection from it.
export function mhaFromFixture(lab, fx) {
  const m = fx.metadata, x = fx.tensors.x;
  const dModel = x.shape[x.shape.length - 1];
  const memory = fx.tensors.memory;
  const mha = new lab.MultiHeadAttention({
    dModel,
    numHeads: Number(m.num_heads),
    numKvHeads: Number(m.num_kv_heads),
    bias: m.bias === '1',
    kvDim: memory ? memory.shape[memory.shape.length - 1] : 0,
  });
  for (const name of mha.parameterNames()) {
    const p = fx.tensors[name];
    mha.setParameter(name, { shape: p.shape, data: p.data });
  }
  return mha;
}

// Forward options from a fixture's metadata and stored masks.
export function optionsFromFixture(fx) {
  const m = fx.metadata, t = fx.tensors;
  const opts = { causal: m.causal === '1', positional: m.positional ?? 'none' };
  if (t.key_padding_mask) opts.keyPaddingMask = t.key_padding_mask;
  if (t.attn_mask) opts.attnMask = t.attn_mask;
  if (t.memory) opts.memory = t.memory;
  if (m.rope_base && opts.positional === 'rope') opts.ropeBase = Number(m.rope_base);
  return opts;
}

// Expects fn to throw an Error whose message matches re; returns it.
export function expectError(assert, fn, re) {
  let error;
  try { fn(); } catch (e) { error = e; }
  assert.ok(error instanceof Error, `expected an Error matching ${re}, got ${error === undefined ? 'no throw' : String(error)}`);
  assert.match(error.message, re);
  return error;
}

// ---- leak checks ---------------------------------------------------------------------------

const LEAK_SLACK = 4096;  // bytes: allocator bookkeeping may move by a few KB

// What a leak would change: malloc'd bytes, the memory size, the stack and the emval handles.
export async function heapSnapshot(lab) {
  await tick();  // let queued microtasks (the stack repair after a JS throw) run
  return { heap: lab.heapUsed(), memory: lab.HEAP8.length, stack: lab.stackUsed(), handles: lab.count_emval_handles() };
}

export function assertSameHeap(assert, before, after, what) {
  assert.ok(Math.abs(after.heap - before.heap) <= LEAK_SLACK, `${what}: heapUsed ${before.heap} -> ${after.heap}`);
  assert.equal(after.memory, before.memory, `${what}: HEAP8.length`);
  assert.equal(after.stack, before.stack, `${what}: stackUsed`);
  assert.equal(after.handles, before.handles, `${what}: emval handles`);
}

// ---- gradients -----------------------------------------------------------------------------

// Central differences of loss() (a double from a forward through the module) in each entry of
// `values` (a Float32Array the forward reads; write() pushes it into the module when it holds a
// copy, e.g. setParameter), compared with `analytic` within 2e-3 + 1e-2·|numeric|.
export function checkGradient(assert, what, loss, values, analytic, write = () => {}, step = 1e-2) {
  for (let i = 0; i < values.length; i++) {
    const saved = values[i];
    values[i] = saved + step; write();
    const plus = loss();
    values[i] = saved - step; write();
    const minus = loss();
    values[i] = saved; write();
    const numeric = (plus - minus) / (2 * step);
    assert.ok(Math.abs(analytic[i] - numeric) <= 2e-3 + 1e-2 * Math.abs(numeric),
              `${what}[${i}]: analytic ${analytic[i]}, numeric ${numeric}`);
  }
}

// Σ a ⊙ w in double over two tensors' data.
export const dotTensors = (a, w) => a.data.reduce((sum, v, i) => sum + v * w.data[i], 0);
