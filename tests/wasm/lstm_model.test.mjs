// lab.Model with architecture 'lstm' (embedding -> LSTM layers -> head) in both flavours: it trains
// through the same Trainer binding as a Transformer (a decoder on k_back, a classifier on brackets)
// with falling loss, save/load round-trips bit for bit, generate carries the state forward, and a
// Transformer-only switch throws an Error naming it with the module still working.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { FLAVOURS, loadLab, expectError } from './harness.mjs';

const DECODER = { kind: 'decoder', architecture: 'lstm', dModel: 32, numLayers: 1, seed: 4 };
const CLASSIFIER = { kind: 'encoder', architecture: 'lstm', dModel: 16, numLayers: 2, seed: 5 };
const OPTIONS = { lr: 1e-2, batchSize: 32, warmupSteps: 5, clipNorm: 1, seed: 1 };
const sameBytes = (a, b) => a.length === b.length && Buffer.compare(Buffer.from(a), Buffer.from(b)) === 0;

// Trains `steps` steps and returns the held-out loss before and after, and the last metrics.
function train(trainer, steps) {
  const before = trainer.evaluate(4);
  let last = trainer.step(10);
  const first = last.losses[0];
  while (last.step < steps) last = trainer.step(Math.min(50, steps - last.step));
  return { before, after: trainer.evaluate(4), first, last };
}

for (const flavour of FLAVOURS) {
  test(`${flavour}: an LSTM decoder trains on k_back, round-trips through save/load and generates`, async () => {
    const lab = await loadLab(flavour);
    const task = new lab.Task('k_back', { length: 12, k: 2, vocab: 6 });
    const model = new lab.Model({ ...DECODER, vocabSize: task.vocabSize() });
    assert.equal(model.config().architecture, 'lstm');
    assert.deepEqual(model.parameterNames(),
      ['tok_emb.weight', 'lstm.weight_ih_l0', 'lstm.weight_hh_l0', 'lstm.bias_ih_l0', 'lstm.bias_hh_l0', 'head.weight']);
    // tok_emb (V, C), weight_ih and weight_hh (4C, C) (gates i, f, g, o stacked), two biases (4C), head (V, C).
    const V = task.vocabSize(), C = 32;
    assert.equal(model.numParameters(), V * C + 4 * C * C + 4 * C * C + 8 * C + V * C);

    const trainer = new lab.Trainer(model, task, OPTIONS);
    const { before, after, first, last } = train(trainer, 300);
    assert.equal(last.headEntropy.length, 0, 'an LSTM has no attention heads');
    assert.ok(last.loss < 0.5 * first, `training loss ${first} -> ${last.loss}`);
    assert.ok(after.loss < 0.5 * before.loss, `held-out loss ${before.loss} -> ${after.loss}`);
    assert.ok(after.accuracy > 0.8, `held-out accuracy ${after.accuracy}`);

    const tokens = Int32Array.of(1, 4, 0, 5, 2, 3, 3, 1);
    const bytes = model.save({ task: 'k_back' });
    const loaded = lab.Model.load(bytes);
    assert.deepEqual(loaded.config(), model.config());
    assert.ok(sameBytes(loaded.save({ task: 'k_back' }), bytes), 'save(load(bytes)) equals bytes');
    assert.ok(sameBytes(new Uint8Array(loaded.logits(tokens).data.buffer), new Uint8Array(model.logits(tokens).data.buffer)),
      'the loaded model gives the same logits bit for bit');

    // generate carries (h, c) forward; greedy output equals the argmax of a full forward at each step.
    const out = model.generate(tokens, 4);
    assert.equal(out.length, tokens.length + 4);
    assert.deepEqual([...out.subarray(0, tokens.length)], [...tokens]);
    for (let n = tokens.length; n < out.length; n++) {
      const p = model.predict(out.subarray(0, n));
      assert.equal(out[n], p.data.indexOf(Math.max(...p.data)), `token ${n} is the argmax after the first ${n}`);
    }
    assert.deepEqual([...loaded.generate(tokens, 4)], [...out]);
    for (const o of [trainer, task, model, loaded]) o.delete();
  });

  test(`${flavour}: an LSTM classifier trains on brackets and round-trips`, async () => {
    const lab = await loadLab(flavour);
    const task = new lab.Task('brackets', { length: 8, vocab: 1 });
    const model = new lab.Model({ ...CLASSIFIER, vocabSize: task.vocabSize(), numClasses: task.numClasses() });
    assert.equal(model.kind(), 'encoder');
    assert.ok(model.parameterNames().includes('lstm.weight_hh_l1'));
    const trainer = new lab.Trainer(model, task, OPTIONS);
    const { before, after, first, last } = train(trainer, 300);
    assert.ok(last.loss < 0.7 * first, `training loss ${first} -> ${last.loss}`);
    assert.ok(after.loss < 0.7 * before.loss, `held-out loss ${before.loss} -> ${after.loss}`);
    assert.ok(after.accuracy > 0.75, `held-out accuracy ${after.accuracy}`);

    const tokens = task.encode('(()())');
    const bytes = model.save();
    const loaded = lab.Model.load(bytes);
    assert.ok(sameBytes(loaded.save(), bytes));
    assert.deepEqual(loaded.predict(tokens), model.predict(tokens));
    assert.deepEqual(loaded.logits(tokens), model.logits(tokens));
    for (const o of [trainer, task, model, loaded]) o.delete();
  });

  test(`${flavour}: Transformer-only switches with an LSTM throw an Error naming them; the module keeps working`, async () => {
    const lab = await loadLab(flavour);
    const base = { ...DECODER, vocabSize: 7 };
    expectError(assert, () => new lab.Model({ ...base, attentionWindow: 2 }), /an lstm has no attention window, got attention_window 2/);
    expectError(assert, () => new lab.Model({ ...base, attentionWindow: 2, globalTokens: 1 }), /global_tokens 1/);
    expectError(assert, () => new lab.Model({ ...base, dropout: 0.1 }), /an lstm has no dropout, got dropout 0\.1/);
    expectError(assert, () => new lab.Model({ ...CLASSIFIER, vocabSize: 5, numClasses: 2, pooling: 'cls' }), /lstm.*cls/i);
    expectError(assert, () => new lab.Model({ ...base, architecture: 'gru' }), /unknown architecture 'gru'; valid: transformer, lstm/);
    const model = new lab.Model(base);
    expectError(assert, () => model.attentionMaps([1, 2, 3]), /lstm decoder; it has no attention to show/);
    expectError(assert, () => model.trace([1, 2, 3], { layer: 0 }), /lstm/);
    const classifier = new lab.Model({ ...CLASSIFIER, vocabSize: 5, numClasses: 2 });
    expectError(assert, () => classifier.generate([1, 2], 2), /decoder/);
    // Still working: the same model computes, and a new one builds.
    assert.deepEqual(model.logits([1, 2, 3]).shape, [3, 7]);
    const again = new lab.Model(base);
    assert.deepEqual(again.logits([1, 2, 3]), model.logits([1, 2, 3]));
    for (const o of [model, classifier, again]) o.delete();
  });
}
