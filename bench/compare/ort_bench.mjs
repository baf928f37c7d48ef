// bench/compare/ort_bench.mjs: onnxruntime-web (WASM backend, SIMD) in Node on the exported
// attention graph (Transpose -> MatMul -> Mul -> Softmax -> MatMul, see torch_bench.py).
//
//   node ort_bench.mjs --threads 2 --sizes 256,1024 --seconds 2
//
// ORT fixes its thread count when its WASM runtime starts, once per process: run.sh starts one
// process per thread count. Graph optimisation is 'all' (ORT fuses the transpose into MatMul).
// Prints one JSON object.
import fs from 'node:fs';
import path from 'node:path';

import * as ort from 'onnxruntime-web';

import { H, D, parseArgs, loadInputs, maxAbsDiff, timeCalls, result, packageVersion } from './common.mjs';

const args = parseArgs(process.argv, { sizes: [256, 1024, 2048], threads: 1, seconds: 2 });

ort.env.wasm.numThreads = args.threads;
ort.env.logLevel = 'error';

const model = fs.readFileSync(path.join(args.data, 'attention.onnx'));
const session = await ort.InferenceSession.create(model, {
  executionProviders: ['wasm'], graphOptimizationLevel: 'all',
});

const results = [];
for (const n of args.sizes) {
  const { q, k, v, ref } = loadInputs(args.data, n);
  const feeds = Object.fromEntries(Object.entries({ q, k, v }).map(([name, data]) => [name, new ort.Tensor('float32', data, [H, n, D])]));
  const run = () => session.run(feeds);
  const out = (await run()).out;
  const err = maxAbsDiff(out.data, ref);
  out.dispose?.();
  const { ms, repeats } = await timeCalls(async () => { (await run()).out.dispose?.(); }, args.seconds);
  results.push(result({ system: 'onnxruntime-web', variant: 'wasm simd, graph opt all', threads: args.threads, n, ms, repeats }, err));
}
await session.release();

const version = packageVersion('onnxruntime-web');
console.log(JSON.stringify({ system: 'onnxruntime-web', version, results }));
