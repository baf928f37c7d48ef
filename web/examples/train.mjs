// web/examples/train.mjs: train a tiny Transformer to reverse sequences, from JavaScript.
//   scripts/build_wasm.sh && node web/examples/train.mjs
import { loadAttnLab, unloadAttnLab } from '../engine/loader.mjs';

const lab = await loadAttnLab();
const task = new lab.Task('reverse', { length: 4, vocab: 6 });          // "a1..a4 | a4..a1", V = 7, T = 8
const model = new lab.Model({ kind: 'decoder', vocabSize: task.vocabSize(), maxLen: 16, dModel: 32,
                              numHeads: 4, numLayers: 2, positional: 'rope', seed: 1 });
const trainer = new lab.Trainer(model, task, { lr: 3e-3, batchSize: 32, warmupSteps: 10, seed: 1 });
console.log(`${model.numParameters()} parameters`);
let m;
while (!m || m.step < 300) {
  m = trainer.step(50);
  console.log(`step ${m.step}: loss ${m.loss.toFixed(4)}, accuracy ${(100 * m.accuracy).toFixed(1)}%, ${m.ms.toFixed(1)} ms/step`);
}
console.log('held out:', trainer.evaluate(4));

const prompt = task.encode('5 0 3 2 |');
console.log(task.decode(model.generate(prompt, 4)));                   // '5 0 3 2 | 2 3 0 5'
console.log('attention maps', model.attentionMaps(prompt).shape);      // [2, 4, 5, 5]

const bytes = model.save({ task: 'reverse', length: 4, vocab: 6 });
const again = lab.Model.load(bytes);
console.log(`checkpoint: ${bytes.length} bytes, notes`, lab.Model.checkpointNotes(bytes));
for (const o of [again, trainer, model, task]) o.delete();
unloadAttnLab(lab);
