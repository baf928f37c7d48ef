// bench/compare/tfjs_bench.mjs: TensorFlow.js with the WASM backend in Node on the same attention,
// softmax(q·kᵀ · scale)·v, in each of three layouts; the fastest one per n is the result (all
// are checked against the reference, and the others' times are kept in the JSON):
//   batched-transposeB   one (H, n, D) x (H, n, D)ᵀ batched matMul, then softmax, then matMul by v
//   per-head-transposeB  the same per head on 2-D tensors
//   per-head-kT          k transposed once per call (inside the timing), then 2-D matMuls
// In tfjs-backend-wasm 4.22 only the 2-D, non-transposed matMul takes XNNPACK's fast path; the
// batched and transposeB forms run a much slower generic loop, so per-head-kT usually wins.
//
//   node tfjs_bench.mjs --threads 1 --sizes 256,1024 --seconds 2
//
// The backend chooses its WASM binary (threaded SIMD, SIMD, plain) when it starts, from what the
// runtime supports; `--threads` is handed to setThreadsCount before that. What it picked is in
// the JSON (variant). Prints one JSON object on the last line.
import * as tf from '@tensorflow/tfjs';
import { setThreadsCount, getThreadsCount } from '@tensorflow/tfjs-backend-wasm';

import { H, D, SCALE, parseArgs, loadInputs, maxAbsDiff, timeCalls, result, packageVersion } from './common.mjs';

const args = parseArgs(process.argv, { sizes: [256, 1024, 2048], threads: 1, seconds: 2 });

setThreadsCount(args.threads);
if (!(await tf.setBackend('wasm'))) throw new Error("tf.setBackend('wasm') failed");
await tf.ready();
const simd = await tf.env().getAsync('WASM_HAS_SIMD_SUPPORT');
const threaded = await tf.env().getAsync('WASM_HAS_MULTITHREAD_SUPPORT');
const threadsUsed = getThreadsCount();

const layouts = {
  'batched-transposeB': (q, k, v) => tf.tidy(() => tf.matMul(tf.softmax(tf.mul(tf.matMul(q, k, false, true), SCALE)), v)),
  'per-head-transposeB': (q, k, v) => tf.tidy(() => tf.stack(tf.unstack(q).map((qh, h) =>
    tf.matMul(tf.softmax(tf.mul(tf.matMul(qh, k.gather(h), false, true), SCALE)), v.gather(h))))),
  'per-head-kT': (q, k, v) => tf.tidy(() => {
    const kT = tf.unstack(tf.transpose(k, [0, 2, 1]));
    const vh = tf.unstack(v);
    return tf.stack(tf.unstack(q).map((qh, h) => tf.matMul(tf.softmax(tf.mul(tf.matMul(qh, kT[h]), SCALE)), vh[h])));
  }),
};

const results = [];
for (const n of args.sizes) {
  const inputs = loadInputs(args.data, n);
  const [q, k, v] = ['q', 'k', 'v'].map((name) => tf.tensor3d(inputs[name], [H, n, D]));
  const measured = [];
  for (const [layout, attention] of Object.entries(layouts)) {
    const out = attention(q, k, v);
    const err = maxAbsDiff(out.dataSync(), inputs.ref);
    out.dispose();
    // dataSync() waits for the result; the WASM backend runs synchronously, so this times the work.
    const { ms, repeats } = await timeCalls(() => { const o = attention(q, k, v); o.dataSync(); o.dispose(); }, args.seconds);
    measured.push(result({ system: 'tfjs-wasm', variant: layout, threads: threadsUsed, n, ms, repeats }, err));
  }
  const best = measured.filter((r) => r.ok).sort((a, b) => a.ms - b.ms)[0] ?? measured[0];
  results.push({
    ...best, variant: `${best.variant}, simd ${simd}, multithread ${threaded}`,
    layouts: Object.fromEntries(measured.map((r) => [r.variant, { ms: r.ms, max_abs_err: r.max_abs_err }])),
  });
  tf.dispose([q, k, v]);
}

console.log(JSON.stringify({
  system: 'tfjs-wasm', version: packageVersion('@tensorflow/tfjs-backend-wasm'), requested_threads: args.threads, results,
}));
