// bench/wasm/head_scores.mjs: the Heads tab's engine calls in WebAssembly, as ratios to the
// model's forward pass (Model.logits) measured in the same process: every head's detector scores
// (Model.headScores) and attention maps (Model.attentionMaps) of a 4-layer decoder on 256 tokens,
// and the gallery (both, as the worker computes them: web/src/engine/worker/heads.ts). The model
// and tokens are bench/bench_heads.cpp's: 4 layers of 4 heads, d_model 128, ff 512, vocabulary
// 2304, seeded weights; lab.randomRepeat(128, 2304, 1).
//
//   node bench/wasm/head_scores.mjs                      threads flavour (1 and 2 threads), single; 9 rounds
//   node bench/wasm/head_scores.mjs --rounds 15
//
// Every call runs once per round, interleaved, so load from other processes hits them alike; the
// table shows the median over rounds of wall time and of the process's CPU time (process.cpuUsage:
// on a loaded machine the CPU time is the steadier measure; the threads flavour's counts its pool).
import { performance } from 'node:perf_hooks';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { loadAttnLab, unloadAttnLab } from '../../web/engine/loader.mjs';

const args = Object.fromEntries(process.argv.slice(2).join(' ').split('--').filter(Boolean)
  .map((kv) => kv.trim().split(/\s+/)).map(([k, v]) => [k, Number(v)]));
const rounds = args.rounds ?? 9, warmup = 1;
const T = 256, V = 2304;
const here = path.dirname(fileURLToPath(import.meta.url));
const built = (flavour) => fs.existsSync(path.join(here, '..', '..', 'web', 'wasm', flavour, 'attnlab.wasm'));
const configs = [{ flavour: 'threads', threads: 1 }, { flavour: 'threads', threads: 2 }, { flavour: 'single', threads: 1 }].filter((c) => built(c.flavour));
if (!configs.length) throw new Error('no WASM flavour built under web/wasm/ (run scripts/build_wasm.sh)');

const median = (a) => { const s = [...a].sort((p, q) => p - q); return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2; };
const calls = {
  forward: (m, ids) => m.logits(ids),
  attentionMaps: (m, ids) => m.attentionMaps(ids),
  headScores: (m, ids) => m.headScores(ids),
  gallery: (m, ids) => [m.headScores(ids), m.attentionMaps(ids)],
};

console.log(`4-layer decoder (H=4, C=128, V=${V}) on T=${T} tokens, median of ${rounds} rounds (node ${process.version})`);
console.log('flavour   threads  call            median ms   time / forward   median CPU ms   CPU / forward');
const labs = {};
for (const c of configs) {
  labs[c.flavour] ??= await loadAttnLab({ flavour: c.flavour });
  const lab = labs[c.flavour];
  if (c.flavour === 'threads') lab.setNumThreads(c.threads);
  const model = new lab.Model({ kind: 'decoder', vocabSize: V, maxLen: T, dModel: 128, numHeads: 4, numLayers: 4, ffDim: 512, positional: 'learned', seed: 1 });
  const ids = lab.randomRepeat(T / 2, V, 1);
  const times = Object.fromEntries(Object.keys(calls).map((k) => [k, []]));
  const cpuTimes = Object.fromEntries(Object.keys(calls).map((k) => [k, []]));
  for (let round = 0; round < warmup + rounds; round++) {
    for (const [name, call] of Object.entries(calls)) {
      const start = performance.now(), cpu0 = process.cpuUsage();
      call(model, ids);
      const ms = performance.now() - start, cpu = process.cpuUsage(cpu0);
      if (round >= warmup) {
        times[name].push(ms);
        cpuTimes[name].push((cpu.user + cpu.system) / 1000);
      }
    }
  }
  const base = median(times.forward), cpuBase = median(cpuTimes.forward);
  for (const name of Object.keys(calls)) {
    const m = median(times[name]), cm = median(cpuTimes[name]);
    console.log(`${c.flavour.padEnd(9)} ${String(c.threads).padStart(7)}  ${name.padEnd(14)} ${m.toFixed(2).padStart(11)}   ${(m / base).toFixed(2).padStart(6)}   ${cm.toFixed(2).padStart(10)}   ${(cm / cpuBase).toFixed(2).padStart(6)}`);
  }
  model.delete();
}
for (const lab of Object.values(labs)) unloadAttnLab(lab);
