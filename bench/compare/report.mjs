// bench/compare/report.mjs: merges the JSON every bench of one run.sh run wrote into one table.
//
//   node report.mjs results/raw            prints the tables; writes results/latest.json and latest.md
//
// Input: results/raw/<step>.r<round>.json (the last line of each bench's output, one JSON object
// with `results`), results/raw/steps.jsonl (one line per step and round: name, round, 1-minute
// load average before and after, seconds) and results/raw/machine.json (written by run.sh).
// Ratios pair rows of the same run only; a row whose output missed the reference by more than
// 1e-4 is shown but never paired. With several rounds each configuration's row is its median round.
import fs from 'node:fs';
import path from 'node:path';

import { H, D, here } from './common.mjs';

const rawDir = path.resolve(process.argv[2] ?? path.join(here, 'results', 'raw'));
const outDir = path.dirname(rawDir);

const readJson = (file) => JSON.parse(fs.readFileSync(file, 'utf8'));
const lastJsonLine = (text) => JSON.parse(text.trim().split('\n').filter((l) => l.startsWith('{')).pop());

const machine = fs.existsSync(path.join(rawDir, 'machine.json')) ? readJson(path.join(rawDir, 'machine.json')) : {};
const steps = fs.existsSync(path.join(rawDir, 'steps.jsonl'))
  ? fs.readFileSync(path.join(rawDir, 'steps.jsonl'), 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)) : [];

const rows = [];
const versions = {};
const roundRows = [];
for (const step of steps) {
  const round = step.round ?? 1;
  const file = path.join(rawDir, `${step.name}.r${round}.json`);
  if (!step.ok || !fs.existsSync(file)) continue;
  let doc;
  try { doc = lastJsonLine(fs.readFileSync(file, 'utf8')); } catch { continue; }
  if (doc.version) versions[doc.system] = doc.version;
  for (const r of doc.results ?? []) roundRows.push({ ...r, step: step.name, round, load: [step.load_start, step.load_end] });
}
// With several rounds (run.sh --rounds N), each configuration keeps its median round (by time;
// the lower median for an even count), with the spread of its times over the rounds. A failed
// check in any round keeps the row failed.
const timeOf = (r) => r.ms ?? r.ms_per_step;
const groups = new Map();
for (const r of roundRows) {
  const key = [r.system, r.variant ?? '', r.n ?? '', r.T ?? '', r.threads].join('|');
  if (!groups.has(key)) groups.set(key, []);
  groups.get(key).push(r);
}
for (const group of groups.values()) {
  const sorted = [...group].sort((a, b) => timeOf(a) - timeOf(b));
  const median = sorted[Math.floor((sorted.length - 1) / 2)];
  rows.push({ ...median, ok: group.every((r) => r.ok), rounds: group.length,
    time_min: timeOf(sorted[0]), time_max: timeOf(sorted[sorted.length - 1]) });
}
const rounds = Math.max(1, ...roundRows.map((r) => r.round));
// "× N (min–max)" after a time when there were several rounds.
const spread = (r, fmt) => (r.rounds > 1 ? ` (${r.rounds}: ${fmt(r.time_min)}–${fmt(r.time_max)})` : '');

const gflops = (n, ms) => (4 * H * n * n * D) / (ms * 1e6);
const attention = rows.filter((r) => r.n !== undefined && r.gflops === undefined);
const matmul = rows.filter((r) => r.gflops !== undefined);
const training = rows.filter((r) => r.steps_per_s !== undefined && r.tokens_per_s === undefined);
// The tang model's training step (train-tang): measured in tokens per second.
const tang = rows.filter((r) => r.tokens_per_s !== undefined);
const lstm = rows.filter((r) => r.T !== undefined);

// Display names, in table order.
const systems = [
  ['attnlab-native', 'attnlab native (C++, -O3 -march=native)'],
  ['attnlab-wasm-threads', 'attnlab WASM threads (SIMD)'],
  ['attnlab-wasm-single', 'attnlab WASM single (SIMD)'],
  ['attnlab-wasm-scalar', 'attnlab WASM scalar (no SIMD)'],
  ['attnlab-embind-threads', 'attnlab Embind MHA layer, threads*'],
  ['attnlab-embind-single', 'attnlab Embind MHA layer, single*'],
  ['attnlab-embind-scalar', 'attnlab Embind MHA layer, scalar*'],
  ['pytorch-sdpa', 'PyTorch F._scaled_dot_product_attention'],
  ['pytorch-math', 'PyTorch matmul/softmax/matmul'],
  ['onnxruntime-web', 'ONNX Runtime Web (WASM SIMD)'],
  ['tfjs-wasm', 'TensorFlow.js WASM (SIMD)'],
];
const order = Object.fromEntries(systems.map(([k], i) => [k, i]));
const label = Object.fromEntries(systems);
attention.sort((a, b) => a.n - b.n || (order[a.system] ?? 99) - (order[b.system] ?? 99) || a.threads - b.threads);

const find = (system, n, threads) => attention.find((r) => r.system === system && r.n === n && r.threads === threads && r.ok);

// Pairs: ours, theirs, threads of each, and the issue's target for ours/theirs speed-up.
const pairDefs = [
  ['attnlab-native', 1, 'pytorch-sdpa', 1, (n) => (n === 2048 ? 4 : n === 256 ? 2 : null)],
  ['attnlab-native', 2, 'pytorch-sdpa', 2, () => null],
  ['attnlab-native', 1, 'pytorch-math', 1, () => null],
  ['attnlab-wasm-threads', 1, 'onnxruntime-web', 1, (n) => (n === 2048 ? 1.6 : null)],
  ['attnlab-wasm-threads', 2, 'onnxruntime-web', 2, (n) => (n === 2048 ? 1.6 : null)],
  ['attnlab-wasm-single', 1, 'onnxruntime-web', 1, () => null],
  ['attnlab-wasm-single', 1, 'tfjs-wasm', 1, () => null],
  ['attnlab-wasm-threads', 1, 'attnlab-wasm-scalar', 1, (n) => (n === 2048 ? 2.5 : null)],
  ['attnlab-embind-threads', 1, 'onnxruntime-web', 1, () => null],
  ['attnlab-embind-threads', 2, 'onnxruntime-web', 2, () => null],
  ['attnlab-native', 1, 'attnlab-wasm-single', 1, () => null],
];
const pairs = [];
for (const n of [...new Set(attention.map((r) => r.n))]) {
  for (const [ours, ot, theirs, tt, target] of pairDefs) {
    const a = find(ours, n, ot), b = find(theirs, n, tt);
    if (!a || !b) continue;
    pairs.push({ ours, ours_threads: ot, theirs, theirs_threads: tt, n, ours_ms: a.ms, theirs_ms: b.ms,
      ratio: a.ms / b.ms, speedup: b.ms / a.ms, target: target(n) });
  }
}

const trainFind = (system, threads) => training.find((r) => r.system === system && r.threads === threads && r.ok);
const trainPairs = [];
for (const [ours, ot, theirs, tt, target] of [
  ['attnlab-native-train', 1, 'pytorch-train', 1, 2.5], ['attnlab-native-train', 2, 'pytorch-train', 2, 2.5],
  ['attnlab-wasm-threads-train', 1, 'pytorch-train', 1, null], ['attnlab-wasm-threads-train', 2, 'pytorch-train', 2, 0.75],
]) {
  const a = trainFind(ours, ot), b = trainFind(theirs, tt);
  if (a && b) trainPairs.push({ ours, ours_threads: ot, theirs, theirs_threads: tt, ours_steps_per_s: a.steps_per_s,
    theirs_steps_per_s: b.steps_per_s, ratio: a.ms_per_step / b.ms_per_step, speedup: a.steps_per_s / b.steps_per_s, target });
}

const tangFind = (system, threads) => tang.find((r) => r.system === system && r.threads === threads && r.ok);
const tangPairs = [];
for (const [ours, ot, theirs, tt, target] of [
  ['attnlab-native-train-tang', 1, 'pytorch-train-tang', 1, 3], ['attnlab-native-train-tang', 2, 'pytorch-train-tang', 2, null],
  ['attnlab-wasm-threads-train-tang', 1, 'pytorch-train-tang', 1, null], ['attnlab-wasm-threads-train-tang', 2, 'pytorch-train-tang', 2, 1],
]) {
  const a = tangFind(ours, ot), b = tangFind(theirs, tt);
  if (a && b) tangPairs.push({ ours, ours_threads: ot, theirs, theirs_threads: tt, ours_tokens_per_s: a.tokens_per_s,
    theirs_tokens_per_s: b.tokens_per_s, speedup: a.tokens_per_s / b.tokens_per_s, target });
}

// Matmul against BLAS sgemm (the issue: at least 80% of OpenBLAS at 512³ on 1 thread).
matmul.sort((a, b) => a.n - b.n || a.threads - b.threads || a.system.localeCompare(b.system));
const matmulPairs = [];
for (const r of matmul.filter((x) => x.system.startsWith('attnlab') && x.ok)) {
  const b = matmul.find((x) => x.system === 'pytorch-matmul' && x.n === r.n && x.threads === r.threads);
  if (b) matmulPairs.push({ n: r.n, threads: r.threads, ours: r.gflops, theirs: b.gflops, fraction: r.gflops / b.gflops,
    target: r.n === 512 && r.threads === 1 ? 0.8 : null });
}

// The LSTM against torch.nn.LSTM, same pass, T and threads (the target: at least 2x PyTorch's
// CPU LSTM on 1 thread, forward + backward).
lstm.sort((a, b) => a.pass.localeCompare(b.pass) || a.threads - b.threads || a.T - b.T || a.system.localeCompare(b.system));
const lstmPairs = [];
for (const r of lstm.filter((x) => x.system.startsWith('attnlab') && x.ok)) {
  const b = lstm.find((x) => x.system === 'pytorch-lstm' && x.pass === r.pass && x.T === r.T && x.threads === r.threads && x.ok);
  if (b) lstmPairs.push({ pass: r.pass, T: r.T, threads: r.threads, ours_ms: r.ms, theirs_ms: b.ms, speedup: b.ms / r.ms,
    ours_cpu_ms: r.cpu_ms, theirs_cpu_ms: b.cpu_ms, cpu_speedup: b.cpu_ms / r.cpu_ms,
    target: r.pass === 'forward+backward' && r.threads === 1 ? 2 : null });
}

// Markdown tables.
const f = (x, d = 2) => (x === undefined || x === null || Number.isNaN(x) ? '' : x.toFixed(d));
const fmtMs = (ms) => (ms >= 100 ? f(ms, 1) : ms >= 10 ? f(ms, 2) : f(ms, 3));
const loadStr = (l) => l.map((x) => f(x, 2)).join(' → ');
const lines = [];
if (rounds > 1) {
  lines.push(`Every measurement ran ${rounds} times, round after round; each row is its median round, and`
    + ' "(N: a–b)" after a time is the spread of that configuration over the N rounds.');
  lines.push('');
}
lines.push(`Attention forward, fp32, Q/K/V (H=${H}, n, D=${D}), batch 1, no mask, scale 1/sqrt(${D});`
  + ` GFLOP/s = 4·H·n²·D / time; ms = median of repeats after warm-up; check = max |out − ref| (≤ 1e-4 to count).`);
lines.push('');
lines.push('| system | threads | n | ms | GFLOP/s | repeats | check | load (1 min) |');
lines.push('|---|---:|---:|---:|---:|---:|---|---|');
for (const r of attention) {
  lines.push(`| ${label[r.system] ?? r.system}${r.system === 'tfjs-wasm' ? ` [${r.variant.split(',')[0]}]` : ''} | ${r.threads} | ${r.n} | ${fmtMs(r.ms)}${spread(r, fmtMs)} | ${f(gflops(r.n, r.ms), 1)} | ${r.repeats}`
    + ` | ${r.ok ? 'ok' : 'FAIL'} ${r.max_abs_err.toExponential(1)} | ${loadStr(r.load)} |`);
}
lines.push('');
lines.push('\\* the shipped Embind module has no bare attention call: a MultiHeadAttention layer with identity'
  + ' projections (cross-attention on [K | V]) runs instead, so its time also holds four 128-wide projections'
  + ' and the copies in and out; GFLOP/s counts the attention alone.');
lines.push('');
lines.push('Pairs from this run (ours/theirs = time ratio, < 1 means ours is faster; speed-up = theirs/ours):');
lines.push('');
lines.push('| ours | theirs | n | ours ms | theirs ms | ours/theirs | speed-up | issue target |');
lines.push('|---|---|---:|---:|---:|---:|---:|---|');
for (const p of pairs) {
  const met = p.target ? ` ≥ ${p.target}x: ${p.speedup >= p.target ? 'met' : 'not met'}` : '';
  lines.push(`| ${label[p.ours] ?? p.ours}, ${p.ours_threads}T | ${label[p.theirs] ?? p.theirs}, ${p.theirs_threads}T | ${p.n}`
    + ` | ${fmtMs(p.ours_ms)} | ${fmtMs(p.theirs_ms)} | ${f(p.ratio)} | ${f(p.speedup)}x |${met} |`);
}
if (training.length) {
  lines.push('');
  lines.push('Tiny encoder training step (2 post-LN layers, d_model 64, 4 heads, ff 256, ReLU, T 64, batch 32, vocabulary 16,'
    + ' mean pooling, 2 classes, dropout 0, AdamW lr 1e-3; one fixed batch; a step = zero_grad + forward + loss + backward + AdamW;'
    + ' same model and parameter count on both sides):');
  lines.push('');
  lines.push('| system | threads | ms/step | steps/s | loss first → last | load (1 min) |');
  lines.push('|---|---:|---:|---:|---|---|');
  for (const r of training) {
    lines.push(`| ${r.system} (${r.variant}) | ${r.threads} | ${f(r.ms_per_step, 1)}${spread(r, (x) => f(x, 1))} | ${f(r.steps_per_s, 1)}`
      + ` | ${f(r.first_loss, 3)} → ${f(r.last_loss, 3)}${r.ok ? '' : ' FAIL'} | ${loadStr(r.load)} |`);
  }
  lines.push('');
  lines.push('| ours | theirs | ours steps/s | theirs steps/s | speed-up | issue target |');
  lines.push('|---|---|---:|---:|---:|---|');
  for (const p of trainPairs) {
    const met = p.target ? ` ≥ ${p.target}x: ${p.speedup >= p.target ? 'met' : 'not met'}` : '';
    lines.push(`| ${p.ours}, ${p.ours_threads}T | ${p.theirs}, ${p.theirs_threads}T | ${f(p.ours_steps_per_s, 1)}`
      + ` | ${f(p.theirs_steps_per_s, 1)} | ${f(p.speedup)}x |${met} |`);
  }
}
if (tang.length) {
  lines.push('');
  lines.push('The tang model\'s training step (scripts/train_text_models.sh\'s tang: 4 pre-LN layers, d_model 128, 4 heads, ff 512,'
    + ' GELU, RoPE, tied embeddings, vocabulary 4003, T 72, batch 32, dropout 0, AdamW lr 1e-3; one fixed batch of token ids;'
    + ' same model and parameter count on both sides):');
  lines.push('');
  lines.push('| system | threads | ms/step | tokens/s | loss first → last | load (1 min) |');
  lines.push('|---|---:|---:|---:|---|---|');
  for (const r of tang) {
    lines.push(`| ${r.system} (${r.variant}) | ${r.threads} | ${f(r.ms_per_step, 1)}${spread(r, (x) => f(x, 1))} | ${f(r.tokens_per_s, 0)}`
      + ` | ${f(r.first_loss, 3)} → ${f(r.last_loss, 3)}${r.ok ? '' : ' FAIL'} | ${loadStr(r.load)} |`);
  }
  lines.push('');
  lines.push('| ours | theirs | ours tokens/s | theirs tokens/s | speed-up | issue target |');
  lines.push('|---|---|---:|---:|---:|---|');
  for (const p of tangPairs) {
    const met = p.target ? ` ≥ ${p.target}x: ${p.speedup >= p.target ? 'met' : 'not met'}` : '';
    lines.push(`| ${p.ours}, ${p.ours_threads}T | ${p.theirs}, ${p.theirs_threads}T | ${f(p.ours_tokens_per_s, 0)}`
      + ` | ${f(p.theirs_tokens_per_s, 0)} | ${f(p.speedup)}x |${met} |`);
  }
}
if (matmul.length) {
  lines.push('');
  lines.push('Matmul C = A·B, fp32, square n x n; GFLOP/s = 2n³ / time (median of repeats); ours is'
    + ' attnlab::kernels::matmul_nn (run-time ISA dispatch), theirs torch.mm on the BLAS PyTorch calls (OpenBLAS sgemm):');
  lines.push('');
  lines.push('| system | threads | n | ms | GFLOP/s | load (1 min) |');
  lines.push('|---|---:|---:|---:|---:|---|');
  for (const r of matmul) {
    lines.push(`| ${r.system} (${r.variant}) | ${r.threads} | ${r.n} | ${fmtMs(r.ms)}${spread(r, fmtMs)} | ${f(r.gflops, 1)}${r.ok ? '' : ' FAIL'} | ${loadStr(r.load)} |`);
  }
  lines.push('');
  lines.push('| n | threads | ours GFLOP/s | OpenBLAS GFLOP/s | ours / OpenBLAS | issue target |');
  lines.push('|---:|---:|---:|---:|---:|---|');
  for (const p of matmulPairs) {
    const met = p.target ? ` ≥ ${p.target * 100}%: ${p.fraction >= p.target ? 'met' : 'not met'}` : '';
    lines.push(`| ${p.n} | ${p.threads} | ${f(p.ours, 1)} | ${f(p.theirs, 1)} | ${f(p.fraction * 100, 0)}% |${met} |`);
  }
}
if (lstm.length) {
  lines.push('');
  lines.push('LSTM, one layer, B 32, I = H = 64, fp32: ours attnlab::Lstm (forward fills the cache backward needs),'
    + ' theirs torch.nn.LSTM (forward under no_grad; forward + backward with x requiring grad); backward to x and every'
    + ' parameter on both sides; ms = median of repeats; CPU ms = median process CPU time of 5 calls (what the'
    + ' code costs on a shared machine; on 2 threads it also counts waiting workers):');
  lines.push('');
  lines.push('| pass | threads | T | ours ms | PyTorch ms | speed-up | ours CPU ms | PyTorch CPU ms | CPU speed-up | issue target |');
  lines.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|---|');
  for (const p of lstmPairs) {
    const met = p.target ? ` ≥ ${p.target}x: ${p.speedup >= p.target ? 'met' : 'not met'}` : '';
    lines.push(`| ${p.pass} | ${p.threads} | ${p.T} | ${fmtMs(p.ours_ms)} | ${fmtMs(p.theirs_ms)} | ${f(p.speedup)}x`
      + ` | ${fmtMs(p.ours_cpu_ms)} | ${fmtMs(p.theirs_cpu_ms)} | ${f(p.cpu_speedup)}x |${met} |`);
  }
}
const failed = steps.filter((s) => !s.ok).map((s) => (rounds > 1 ? `${s.name} (round ${s.round})` : s.name));
const notOk = rows.filter((r) => !r.ok).map((r) => `${r.system} ${r.threads}T${r.n ? ` n=${r.n}` : ''}${r.T ? ` T=${r.T}` : ''}`);
lines.push('');
lines.push(`Machine: ${machine.cpu ?? '?'}, ${machine.cores ?? '?'} cores; load average (1/5/15 min) at start ${machine.load_start ?? '?'},`
  + ` at end ${machine.load_end ?? '?'}. Date ${machine.date ?? '?'}. Command: \`${machine.command ?? 'bench/compare/run.sh'}\`.`);
lines.push(`Versions: ${Object.entries({ ...machine.versions, ...versions }).map(([k, v]) => `${k} ${v}`).join(', ')}.`);
if (failed.length) lines.push(`Steps that failed (see results/raw/*.err): ${failed.join(', ')}.`);
if (notOk.length) lines.push(`Results that missed the reference or did not learn: ${notOk.join(', ')}.`);

const md = lines.join('\n') + '\n';
process.stdout.write(md);
fs.writeFileSync(path.join(outDir, 'latest.md'), md);
fs.writeFileSync(path.join(outDir, 'latest.json'), JSON.stringify({ machine, versions, steps, attention, training, tang, matmul, lstm, pairs, train_pairs: trainPairs, tang_pairs: tangPairs, matmul_pairs: matmulPairs, lstm_pairs: lstmPairs }, null, 1) + '\n');
