// bench/wasm/normalizers.mjs: the normalisers (softmax, sigmoid, relu) on the flash path in
// WebAssembly, as ratios to softmax measured in the same process: MultiHeadAttention.forward
// with H = 4 heads of D = 32 (C = 128), one thread of the single flavour.
//
//   node bench/wasm/normalizers.mjs                 T=2048, full and causal, 7 rounds
//   node bench/wasm/normalizers.mjs --T 1024 --rounds 11
//
// Every normaliser runs once per round, interleaved, so load from other processes hits them
// alike; the table shows the median over rounds. The projections (the same for every
// normaliser) are in the time, so the ratios understate the attention's own difference.
import { performance } from 'node:perf_hooks';

import { loadAttnLab, unloadAttnLab } from '../../web/engine/loader.mjs';

const args = Object.fromEntries(process.argv.slice(2).join(' ').split('--').filter(Boolean)
  .map((kv) => kv.trim().split(/\s+/)).map(([k, v]) => [k, Number(v)]));
const T = args.T ?? 2048, C = 128, H = 4;
const rounds = args.rounds ?? 7, warmup = 1;

const lab = await loadAttnLab({ flavour: 'single' });
const mha = new lab.MultiHeadAttention({ dModel: C, numHeads: H, seed: 1 });
const x = { shape: [1, T, C], data: Float32Array.from({ length: T * C }, (_, i) => Math.sin(i * 0.37)) };
const normalizers = ['softmax', 'sigmoid', 'relu'];

console.log(`MultiHeadAttention.forward T=${T} C=${C} H=${H}, single flavour, median of ${rounds} rounds (node ${process.version})`);
console.log('mask     normalizer   median ms   time / softmax');
for (const causal of [false, true]) {
  const times = Object.fromEntries(normalizers.map((n) => [n, []]));
  for (let round = 0; round < warmup + rounds; round++) {
    for (const normalizer of normalizers) {
      const start = performance.now();
      mha.forward(x, { causal, normalizer });
      const ms = performance.now() - start;
      if (round >= warmup) times[normalizer].push(ms);
    }
  }
  const median = (a) => { const s = [...a].sort((p, q) => p - q); return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2; };
  const base = median(times.softmax);
  for (const normalizer of normalizers) {
    const m = median(times[normalizer]);
    console.log(`${(causal ? 'causal' : 'full').padEnd(8)} ${normalizer.padEnd(10)} ${m.toFixed(2).padStart(11)}   ${(m / base).toFixed(2).padStart(6)}`);
  }
}
mha.delete();
unloadAttnLab(lab);
