// bench/wasm/precision_forward.mjs: MultiHeadAttention forward in WebAssembly in fp32, fp16 and
// bf16 (option `precision`), one thread, as ratios to fp32 measured in the same process. fp32
// takes the flash path; fp16 and bf16 take the recorded path, which rounds every stored stage.
//
//   node bench/wasm/precision_forward.mjs                 single flavour, T = 1024 and 2048, 10 rounds
//   node bench/wasm/precision_forward.mjs --rounds 20 --flavour threads   (the threads build, 1 thread)
//
// Every configuration runs once per round, interleaved, so load from other processes hits them
// alike; the table shows the median over rounds.
import { performance } from 'node:perf_hooks';

import { loadAttnLab, unloadAttnLab } from '../../web/engine/loader.mjs';

const args = Object.fromEntries(process.argv.slice(2).join(' ').split('--').filter(Boolean)
  .map((kv) => kv.trim().split(/\s+/)));
const C = 128, H = 4, rounds = Number(args.rounds ?? 10), warmup = 2, flavour = args.flavour ?? 'single';

const lab = await loadAttnLab({ flavour });
lab.setNumThreads(1);
const mha = new lab.MultiHeadAttention({ dModel: C, numHeads: H, seed: 1 });
const configs = [
  { name: 'fp32 (flash)             ', options: {} },
  { name: 'fp16 (recorded)          ', options: { precision: 'fp16' } },
  { name: 'bf16 (recorded)          ', options: { precision: 'bf16' } },
  { name: 'fp16 softmax same, naive ', options: { precision: 'fp16', softmaxPrecision: 'same', stableSoftmax: false } },
];
const median = (a) => { const s = [...a].sort((p, q) => p - q); return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2; };

for (const T of [1024, 2048]) {
  const x = { shape: [1, T, C], data: Float32Array.from({ length: T * C }, (_, i) => Math.sin(i * 0.37)) };
  for (const c of configs) c.times = [];
  for (let round = 0; round < warmup + rounds; round++) {
    for (const c of configs) {
      const start = performance.now();
      mha.forward(x, c.options);
      const ms = performance.now() - start;
      if (round >= warmup) c.times.push(ms);
    }
  }
  const base = median(configs[0].times);
  console.log(`MultiHeadAttention.forward B=1 T=${T} C=${C} H=${H}, ${flavour} flavour, 1 thread, median of ${rounds} rounds (node ${process.version})`);
  console.log('precision                  median ms   time / fp32');
  for (const c of configs) {
    const m = median(c.times);
    console.log(`${c.name}  ${m.toFixed(2).padStart(9)}   ${(m / base).toFixed(2).padStart(6)}`);
  }
}
mha.delete();
unloadAttnLab(lab);
