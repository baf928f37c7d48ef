// tests/wasm/isa_fixture.mjs: what the WebAssembly module computes for one attention layer, kept
// as tests/reference/wasm_isa_trace.json so that the native "wasm" kernels can be held to it bit
// for bit (tests/kernels/test_isa.cpp) and the module itself too (isa_wasm.test.mjs). Not a test
// file; run it to write the fixture after a deliberate change of the kernels' arithmetic:
//
//   node tests/wasm/isa_fixture.mjs          (needs web/wasm/threads, scripts/build_wasm.sh)
//
// The case (in the fixture, read by both sides): a MultiHeadAttention of seeded weights with
// GQA, RoPE and the causal mask, traced at every stage (the recorded path) on a short x, and a
// forward on a long x, whose keys span several tiles of the flash path (and its lazy-reference
// forward in WebAssembly), kept as a 64-bit FNV-1a hash of its output's bits.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const FIXTURE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../reference/wasm_isa_trace.json');

export const CASE = {
  mha: { dModel: 16, numHeads: 4, numKvHeads: 2, seed: 3 },
  options: { causal: true, positional: 'rope' },
  trace: { shape: [1, 10, 16], xorshiftSeed: 7 },  // one sequence: batch 0 only
  long: { shape: [1, 300, 16], xorshiftSeed: 8 },
};

// x of `shape` from a 32-bit xorshift (13, 17, 5) seeded with `seed`: (s / 2^32)·2 − 1, rounded to
// float32 (the native test draws the same numbers).
export function xorshiftTensor(shape, seed) {
  let s = seed >>> 0;
  const data = new Float32Array(shape.reduce((a, b) => a * b, 1));
  for (let i = 0; i < data.length; i++) {
    s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0;
    data[i] = (s / 2 ** 32) * 2 - 1;
  }
  return { shape, data };
}

const bitsOf = (data) => new Uint32Array(Float32Array.from(data).buffer);
export const base64Bits = (data) => Buffer.from(bitsOf(data).buffer).toString('base64');

// FNV-1a over the 32-bit words of the float bits, 64-bit, as 16 hex digits.
export function fnv1a64(data) {
  let h = 0xcbf29ce484222325n;
  for (const w of bitsOf(data)) h = ((h ^ BigInt(w)) * 0x100000001b3n) & 0xffffffffffffffffn;
  return h.toString(16).padStart(16, '0');
}

// The case computed by the module `lab`: stages [{ stage, head, shape, bits }] (head null for a
// stage that spans the whole width), and longFnv1a64.
export function compute(lab, c = CASE) {
  const mha = new lab.MultiHeadAttention(c.mha);
  const tr = mha.trace(xorshiftTensor(c.trace.shape, c.trace.xorshiftSeed), c.options);
  const stages = [];
  for (const stage of tr.stageNames()) {
    const heads = tr.numHeads(stage);  // 1 for a whole-width stage (every stage here has several heads or none)
    for (let head = 0; head < heads; head++) {
      const t = heads === 1 ? tr.stage(stage) : tr.stage(stage, head);
      stages.push({ stage, head: heads === 1 ? null : head, shape: t.shape, bits: base64Bits(t.data) });
    }
  }
  const out = mha.forward(xorshiftTensor(c.long.shape, c.long.xorshiftSeed), { causal: true });
  tr.delete(); mha.delete();
  return { stages, longFnv1a64: fnv1a64(out.data) };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { loadAttnLab, unloadAttnLab } = await import('../../web/engine/loader.mjs');
  const lab = await loadAttnLab({ flavour: 'threads' });
  const result = compute(lab);
  fs.writeFileSync(FIXTURE, `${JSON.stringify({ case: CASE, ...result }, null, 1)}\n`);
  console.log(`wrote ${path.relative(process.cwd(), FIXTURE)}: ${result.stages.length} matrices`);
  unloadAttnLab(lab);
}
