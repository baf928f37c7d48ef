// bench/wasm/patching.mjs: one activation-patching table (Model.patch) in WebAssembly, the case of
// bench/bench_patching.cpp: a decoder of the shipped `brown` model's shape (4 layers of 4 heads,
// C = 128, F = 512, V = 2304, RoPE, pre-LN, tied), random weights, prompts of T ids
// (37 i + 5) mod V, the corrupted one differing at position T - 4; beside one forward
// (Model.logits) of the same prompt.
//
//   node bench/wasm/patching.mjs                       T = 20 and 64, single flavour, 7 rounds
//   node bench/wasm/patching.mjs --flavour threads --rounds 11
//
// The table shows the median over rounds and the table's time in forwards.
import { performance } from 'node:perf_hooks';

import { loadAttnLab, unloadAttnLab } from '../../web/engine/loader.mjs';

const argv = process.argv.slice(2);
const arg = (name, fallback) => (argv.includes(`--${name}`) ? argv[argv.indexOf(`--${name}`) + 1] : fallback);
const flavour = arg('flavour', 'single');
const rounds = Number(arg('rounds', 7));

const lab = await loadAttnLab({ flavour });
const model = new lab.Model({ kind: 'decoder', vocabSize: 2304, maxLen: 128, dModel: 128, numHeads: 4, numLayers: 4, ffDim: 512, positional: 'rope', tieWeights: true, seed: 1 });
const prompt = (t, corrupted) => Int32Array.from({ length: t }, (_, i) => (corrupted && i === t - 4 ? 1882 : (37 * i + 5) % 2304));
const median = (a) => { const s = [...a].sort((p, q) => p - q); return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2; };

// The machine is shared: beside wall time, the process's CPU time (user + system), which other
// processes taking the cores do not inflate (with the threads flavour it sums every thread).
const cpuMs = (from) => { const u = process.cpuUsage(from); return (u.user + u.system) / 1000; };
console.log(`Model.patch, L=4 H=4 C=128, ${flavour} flavour (${lab.buildInfo().threads} threads), median of ${rounds} rounds (node ${process.version})`);
console.log('T     forwards   table ms (cpu)     forward ms (cpu)   table / forward (cpu)');
for (const t of [20, 64]) {
  const clean = prompt(t, false), corrupted = prompt(t, true);
  const rows = { table: [], tableCpu: [], forward: [], forwardCpu: [] };
  for (let round = 0; round <= rounds; round++) {
    let start = performance.now(), cpu = process.cpuUsage();
    model.patch(clean, corrupted, { answer: 1882, wrong: 459 });
    const a = [performance.now() - start, cpuMs(cpu)];
    start = performance.now();
    cpu = process.cpuUsage();
    model.logits(clean);
    const b = [performance.now() - start, cpuMs(cpu)];
    if (round > 0) {
      rows.table.push(a[0]);
      rows.tableCpu.push(a[1]);
      rows.forward.push(b[0]);
      rows.forwardCpu.push(b[1]);
    }
  }
  const m = Object.fromEntries(Object.entries(rows).map(([k, v]) => [k, median(v)]));
  console.log(`${String(t).padEnd(5)} ${String(2 + 16 + 4 * t).padStart(8)} ${m.table.toFixed(1).padStart(9)} (${m.tableCpu.toFixed(1)}) ${m.forward.toFixed(2).padStart(10)} (${m.forwardCpu.toFixed(2)}) ${(m.table / m.forward).toFixed(1).padStart(10)} (${(m.tableCpu / m.forwardCpu).toFixed(1)})`);
}
model.delete();
unloadAttnLab(lab);
