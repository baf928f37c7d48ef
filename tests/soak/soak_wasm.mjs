// tests/soak/soak_wasm.mjs: the WebAssembly half of scripts/soak.sh. Runs the engine's everyday
// mix in the threaded build under Node for a given time and samples memory at a fixed interval:
// the module's malloc'd bytes (lab.heapUsed()), the size of its memory (HEAP8.length: it only
// grows), and Node's resident set (process.memoryUsage().rss). Memory that a call keeps for good
// shows as growth of heapUsed; a JS wrapper never deleted would also grow the emval handle count,
// sampled too.
//
// The mix is the native one (tests/soak/soak_native.cpp) as the page makes it: a long-lived
// decoder keeps training 50 steps per round; each round a short-lived model of either kind trains
// 10 steps, evaluates, saves, loads (Model.load, loadParameters), takes attention maps and a trace,
// generates (decoder), and is deleted; plus a few calls that fail with an Error, the path that
// unwinds WebAssembly frames without running destructors.
//
//   node tests/soak/soak_wasm.mjs --seconds 1800 --interval 60 --threads 2 --csv build-soak/wasm.csv
//
// CSV columns: elapsed_s, node_rss_mib, wasm_memory_mib, heap_used_mib, emval_handles, steps, rounds.
// The bound on growth is checked by scripts/soak.sh; this program only measures.
import fs from 'node:fs';
import { setImmediate as tick } from 'node:timers/promises';
import { parseArgs } from 'node:util';

import { loadAttnLab, unloadAttnLab } from '../../web/engine/loader.mjs';

const { values } = parseArgs({
  options: { seconds: { type: 'string' }, interval: { type: 'string' }, threads: { type: 'string' }, csv: { type: 'string' } },
});
const seconds = Number(values.seconds ?? 120), interval = Number(values.interval ?? 10), threads = Number(values.threads ?? 2);
if (!(seconds > 0) || !(interval > 0) || !(threads >= 1) || !values.csv) {
  throw new Error(`soak_wasm: --seconds (${values.seconds}) and --interval (${values.interval}) must be positive, --threads (${values.threads}) at least 1, --csv set`);
}

const MIB = 2 ** 20;
const DECODER = { kind: 'decoder', maxLen: 32, dModel: 32, numHeads: 4, numLayers: 2, ffDim: 128, positional: 'rope' };
const ENCODER = { kind: 'encoder', maxLen: 32, dModel: 16, numHeads: 2, numLayers: 1, ffDim: 64 };

const lab = await loadAttnLab({ flavour: 'threads' });
lab.setNumThreads(threads);

// One short-lived model through every call the page makes; everything it creates is deleted.
// Returns the training steps it did.
function shortLivedRound(round) {
  const decoder = round % 2 === 0;
  const task = decoder ? new lab.Task('copy', { length: 4 }) : new lab.Task('brackets', { length: 8 });
  const config = decoder ? { ...DECODER, vocabSize: task.vocabSize() }
    : { ...ENCODER, vocabSize: task.vocabSize(), numClasses: task.numClasses() };
  const model = new lab.Model({ ...config, seed: round + 1 });
  const trainer = new lab.Trainer(model, task, { batchSize: 16, warmupSteps: 5, seed: round + 1 });
  const STEPS = 10;
  trainer.step(STEPS);
  trainer.evaluate(2);
  const bytes = model.save();
  const again = lab.Model.load(bytes);
  again.loadParameters(bytes);
  const batch = task.sample(2, round);
  const padding = batch.padding ? { padding: batch.padding } : {};
  again.attentionMaps(batch.tokens, padding);
  const trace = again.trace(batch.tokens, { layer: 0, ...padding });
  trace.stage('weights', 0, 0);
  trace.delete();
  if (decoder) again.generate(batch.tokens.data.slice(0, 5), 4);
  for (const call of [() => trainer.step(0), () => new lab.Model({ ...config, dModel: 7 }), () => lab.Model.load(bytes.slice(0, 16))]) {
    try { call(); } catch (e) { if (!(e instanceof Error)) throw e; continue; }
    throw new Error('soak_wasm: a call that must fail did not');
  }
  for (const o of [trainer, again, model, task]) o.delete();
  return STEPS;
}

const task = new lab.Task('reverse', { length: 4, vocab: 6 });
const model = new lab.Model({ ...DECODER, vocabSize: task.vocabSize(), seed: 1 });
const trainer = new lab.Trainer(model, task, { warmupSteps: 10 });

fs.writeFileSync(values.csv, 'elapsed_s,node_rss_mib,wasm_memory_mib,heap_used_mib,emval_handles,steps,rounds\n');
const start = performance.now();
const elapsed = () => (performance.now() - start) / 1000;
let steps = 0, rounds = 0, nextSample = 0;
for (;;) {
  const now = elapsed();
  if (now >= nextSample) {
    await tick();  // let queued microtasks (the stack repair after a JS throw) run first
    const row = [Math.round(now), process.memoryUsage().rss / MIB, lab.HEAP8.length / MIB, lab.heapUsed() / MIB,
      lab.count_emval_handles(), steps, rounds];
    fs.appendFileSync(values.csv, row.map((v) => (Number.isInteger(v) ? v : v.toFixed(3))).join(',') + '\n');
    nextSample += interval;
  }
  if (now >= seconds) break;
  trainer.step(50);
  steps += 50;
  steps += shortLivedRound(rounds++);
  if (rounds % 20 === 0) await tick();
}
console.log(`soak_wasm: ${steps} steps, ${rounds} rounds in ${Math.round(elapsed())} s; final eval loss of the long-lived model ${trainer.evaluate(4).loss.toFixed(4)}`);
for (const o of [trainer, model, task]) o.delete();
unloadAttnLab(lab);
