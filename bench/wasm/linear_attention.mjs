// bench/wasm/linear_attention.mjs: MultiHeadAttention.forward with variant 'linear' (running
// sums, O(n·D²)) against the default softmax attention (the flash path, O(n²·D)) in WebAssembly,
// the equivalent of BM_VariantLinear: D = 32, 4 heads (C = 128), one thread, causal and not.
// The times include the four projections both variants share.
//
//   node bench/wasm/linear_attention.mjs                       n = 256 … 4096, 5 rounds, single flavour
//   node bench/wasm/linear_attention.mjs --max 16384 --rounds 3
//
// Each round runs every configuration once, so load from other processes hits them alike; the
// table shows the median over rounds and the ratio linear / full.
import { performance } from 'node:perf_hooks';

import { loadAttnLab } from '../../web/engine/loader.mjs';

const args = Object.fromEntries(process.argv.slice(2).join(' ').split('--').filter(Boolean)
  .map((kv) => kv.trim().split(/\s+/)).map(([k, v]) => [k, v]));
const maxN = Number(args.max ?? 4096), rounds = Number(args.rounds ?? 5), flavour = args.flavour ?? 'single';
const H = 4, D = 32, C = H * D;

const lab = await loadAttnLab({ flavour });
lab.setNumThreads(1);
const mha = new lab.MultiHeadAttention({ dModel: C, numHeads: H, seed: 1 });
const median = (a) => { const s = [...a].sort((p, q) => p - q); return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2; };

console.log(`MultiHeadAttention.forward C=${C} H=${H} D=${D}, ${flavour} flavour, 1 thread, median of ${rounds} rounds (node ${process.version})`);
console.log('     n  mask     full ms   linear ms   linear / full');
for (let n = 256; n <= maxN; n *= 2) {
  const x = { shape: [1, n, C], data: Float32Array.from({ length: n * C }, (_, i) => Math.sin(i * 0.37)) };
  for (const causal of [false, true]) {
    const times = { full: [], linear: [] };
    for (let round = 0; round < rounds + 1; round++) {
      for (const variant of ['full', 'linear']) {
        const start = performance.now();
        mha.forward(x, { causal, variant });
        if (round > 0) times[variant].push(performance.now() - start);  // round 0 warms up
      }
    }
    const full = median(times.full), linear = median(times.linear);
    console.log(`${String(n).padStart(6)}  ${causal ? 'causal' : 'none  '}  ${full.toFixed(2).padStart(9)}  ${linear.toFixed(2).padStart(10)}  ${(linear / full).toFixed(2).padStart(14)}`);
  }
}
mha.delete();
