// bench/wasm/block_sparse.mjs: block-sparse against full attention in WebAssembly (the single
// flavour, one thread): one MultiHeadAttention forward of each, interleaved per round, with the
// layout's live-block fraction and the ratio of the sparse time to what that fraction of the
// full time predicts (1 = the work follows the live blocks; the issue asks for at most 1.5 of
// attention alone, and both calls here also run the four projections, which do not shrink).
//
//   node bench/wasm/block_sparse.mjs                         T=4096 C=128 H=4 b=64 w=1 g=1 r=1, 5 rounds
//   node bench/wasm/block_sparse.mjs --T 2048 --rounds 10
import { performance } from 'node:perf_hooks';

import { loadAttnLab, unloadAttnLab } from '../../web/engine/loader.mjs';

const args = Object.fromEntries(process.argv.slice(2).join(' ').split('--').filter(Boolean)
  .map((kv) => kv.trim().split(/\s+/)).map(([k, v]) => [k, Number(v)]));
const T = args.T ?? 4096, C = args.C ?? 128, H = args.H ?? 4, rounds = args.rounds ?? 5, warmup = 1;
const sparse = { blockSize: args.b ?? 64, windowBlocks: args.w ?? 1, globalBlocks: args.g ?? 1, randomBlocks: args.r ?? 1, sparseSeed: 0 };

const lab = await loadAttnLab({ flavour: 'single' });
lab.setNumThreads(1);
const mha = new lab.MultiHeadAttention({ dModel: C, numHeads: H, seed: 1 });
const x = { shape: [1, T, C], data: Float32Array.from({ length: T * C }, (_, i) => Math.sin(i * 0.37)) };
const layout = lab.sparseLayout(T, T, sparse);
const fraction = layout.data.reduce((n, v) => n + v, 0) / layout.data.length;

const configs = [{ name: 'full        ', options: {}, times: [] },
  { name: 'block_sparse', options: { variant: 'block_sparse', ...sparse }, times: [] }];
for (let round = 0; round < warmup + rounds; round++) {
  for (const c of configs) {
    const start = performance.now();
    mha.forward(x, c.options);
    if (round >= warmup) c.times.push(performance.now() - start);
  }
}
const median = (a) => { const s = [...a].sort((p, q) => p - q); return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2; };
const [full, blocks] = configs.map((c) => median(c.times));
console.log(`MultiHeadAttention.forward T=${T} C=${C} H=${H}, single flavour, 1 thread, median of ${rounds} rounds (node ${process.version})`);
console.log(`layout b=${sparse.blockSize} w=${sparse.windowBlocks} g=${sparse.globalBlocks} r=${sparse.randomBlocks}: live-block fraction ${fraction.toFixed(4)}`);
console.log(`full          ${full.toFixed(1).padStart(9)} ms`);
console.log(`block_sparse  ${blocks.toFixed(1).padStart(9)} ms   ratio to fraction x full: ${(blocks / (fraction * full)).toFixed(2)}`);
mha.delete();
unloadAttnLab(lab);
