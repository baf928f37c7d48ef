// bench/wasm/attention_forward.mjs: one MultiHeadAttention forward in WebAssembly, SIMD vs scalar
// and 1 vs 2 threads, as ratios to a baseline measured in the same process.
//
//   node bench/wasm/attention_forward.mjs                 B=1 T=256 C=128 H=4, 40 rounds
//   node bench/wasm/attention_forward.mjs --T 512 --rounds 20
//
// Every configuration runs once per round, interleaved, so load from other processes hits them
// alike; the table shows the median over rounds. Baseline: the single flavour (WASM SIMD, one
// thread). Flavours that are not built (scripts/build_wasm.sh threads single scalar) are skipped.
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';

import { loadAttnLab, unloadAttnLab } from '../../web/engine/loader.mjs';

const args = Object.fromEntries(process.argv.slice(2).join(' ').split('--').filter(Boolean)
  .map((kv) => kv.trim().split(/\s+/)).map(([k, v]) => [k, Number(v)]));
const B = args.B ?? 1, T = args.T ?? 256, C = args.C ?? 128, H = args.H ?? 4;
const rounds = args.rounds ?? 40, warmup = 3;

const built = (flavour) => fs.existsSync(fileURLToPath(new URL(`../../web/wasm/${flavour}/attnlab.wasm`, import.meta.url)));

const x = { shape: [B, T, C], data: Float32Array.from({ length: B * T * C }, (_, i) => Math.sin(i * 0.37)) };
const options = { causal: true };

const configs = [
  { name: 'single  SIMD    1 thread ', flavour: 'single', threads: 1, baseline: true },
  { name: 'scalar  no SIMD 1 thread ', flavour: 'scalar', threads: 1 },
  { name: 'threads SIMD    1 thread ', flavour: 'threads', threads: 1 },
  { name: 'threads SIMD    2 threads', flavour: 'threads', threads: 2 },
].filter((c) => built(c.flavour));

const labs = {};
for (const c of configs) {
  labs[c.flavour] ??= await loadAttnLab({ flavour: c.flavour });
  const lab = labs[c.flavour];
  c.lab = lab;
  c.mha = new lab.MultiHeadAttention({ dModel: C, numHeads: H, seed: 1 });
  c.times = [];
}

for (let round = 0; round < warmup + rounds; round++) {
  for (const c of configs) {
    c.lab.setNumThreads(c.threads);
    const start = performance.now();
    c.mha.forward(x, options);
    const ms = performance.now() - start;
    if (round >= warmup) c.times.push(ms);
  }
}

const median = (a) => { const s = [...a].sort((p, q) => p - q); return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2; };
const base = median(configs.find((c) => c.baseline)?.times ?? configs[0].times);
console.log(`MultiHeadAttention.forward B=${B} T=${T} C=${C} H=${H} causal, median of ${rounds} rounds (node ${process.version})`);
console.log('configuration               median ms   time / baseline');
for (const c of configs) {
  const m = median(c.times);
  console.log(`${c.name}   ${m.toFixed(3).padStart(9)}   ${(m / base).toFixed(2).padStart(6)}`);
}
for (const c of configs) c.mha.delete();
for (const lab of Object.values(labs)) unloadAttnLab(lab);
