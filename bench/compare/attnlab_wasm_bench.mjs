// bench/compare/attnlab_wasm_bench.mjs: the shipped WebAssembly module (web/wasm/<flavour>/, the
// Embind API a page uses) on the shared attention inputs, through web/engine/loader.mjs.
//
//   node attnlab_wasm_bench.mjs --sizes 256,1024 --seconds 2
//
// The Embind API has no bare scaled-dot-product call, so this runs a MultiHeadAttention layer
// whose projections pass Q, K and V through unchanged: dModel 128, 4 heads, no biases,
// cross-attention on memory = [K | V] (kvDim 256), q_proj = out_proj = I, k_proj = [I 0],
// v_proj = [0 I]. Multiplying by 1 and adding zeros is exact, so the output is checked against
// the same reference; but the time includes the four projections (2·n·128·768 extra flops,
// 19% on top of the attention at n = 2048, 150% at n = 256) and the copies in and out.
// GFLOP/s still counts the attention alone. The kernel itself in WASM, without any of this, is
// measured by attnlab_compare.cpp built with em++ (run.sh).
//
// Configurations: threads flavour with lab.setNumThreads(1) and (2), single; scalar if built.
import fs from 'node:fs';
import path from 'node:path';

import { loadAttnLab, unloadAttnLab } from '../../web/engine/loader.mjs';
import { H, D, here, parseArgs, loadInputs, maxAbsDiff, timeCalls, result } from './common.mjs';

const args = parseArgs(process.argv, { sizes: [256, 1024, 2048], seconds: 2, flavours: 'threads,single,scalar' });
const C = H * D;  // 128: x is (n, C) with x[t, h·D + d] = q[h, t, d]

const built = (flavour) => fs.existsSync(path.join(here, '..', '..', 'web', 'wasm', flavour, 'attnlab.wasm'));
const configs = [
  { flavour: 'threads', threads: 1 }, { flavour: 'threads', threads: 2 },
  { flavour: 'single', threads: 1 }, { flavour: 'scalar', threads: 1 },
].filter((c) => args.flavours.split(',').includes(c.flavour) && built(c.flavour));
if (!configs.length) throw new Error('no WASM flavour built under web/wasm/ (run scripts/build_wasm.sh)');

const eye = (rows, cols, offset = 0) => {  // (rows, cols) with ones at (i, i + offset)
  const m = new Float32Array(rows * cols);
  for (let i = 0; i < rows; i++) m[i * cols + i + offset] = 1;
  return { shape: [rows, cols], data: m };
};

// (H, n, D) -> columns [col0, col0 + C) of a (n, width) matrix, and back.
const headsToRows = (src, n, dst, width, col0) => {
  for (let h = 0; h < H; h++) for (let t = 0; t < n; t++) for (let d = 0; d < D; d++) dst[t * width + col0 + h * D + d] = src[(h * n + t) * D + d];
};
const rowsToHeads = (src, n) => {
  const out = new Float32Array(H * n * D);
  for (let h = 0; h < H; h++) for (let t = 0; t < n; t++) for (let d = 0; d < D; d++) out[(h * n + t) * D + d] = src[t * C + h * D + d];
  return out;
};

const labs = {};
const results = [];
const buildInfo = {};
for (const c of configs) {
  labs[c.flavour] ??= await loadAttnLab({ flavour: c.flavour });
  buildInfo[c.flavour] = labs[c.flavour].buildInfo();
}
for (const n of args.sizes) {
  const { q, k, v, ref } = loadInputs(args.data, n);
  const x = { shape: [n, C], data: new Float32Array(n * C) };
  const memory = { shape: [n, 2 * C], data: new Float32Array(n * 2 * C) };
  headsToRows(q, n, x.data, C, 0);
  headsToRows(k, n, memory.data, 2 * C, 0);
  headsToRows(v, n, memory.data, 2 * C, C);
  for (const c of configs) {
    const lab = labs[c.flavour];
    lab.setNumThreads(c.threads);
    const mha = new lab.MultiHeadAttention({ dModel: C, numHeads: H, bias: false, kvDim: 2 * C, seed: 0 });
    try {
      mha.setParameter('q_proj.weight', eye(C, C));
      mha.setParameter('k_proj.weight', eye(C, 2 * C));
      mha.setParameter('v_proj.weight', eye(C, 2 * C, C));
      mha.setParameter('out_proj.weight', eye(C, C));
      const options = { memory };
      const err = maxAbsDiff(rowsToHeads(mha.forward(x, options).data, n), ref);
      const { ms, repeats } = await timeCalls(() => mha.forward(x, options), args.seconds);
      results.push(result({
        system: `attnlab-embind-${c.flavour}`, variant: 'MultiHeadAttention, identity projections',
        threads: c.threads, n, ms, repeats,
      }, err));
    } finally {
      mha.delete();
    }
  }
}
for (const lab of Object.values(labs)) unloadAttnLab(lab);
console.log(JSON.stringify({ system: 'attnlab-embind', build: buildInfo, results }));
