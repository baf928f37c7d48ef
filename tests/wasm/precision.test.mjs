// Precision emulation through the JavaScript API (AttentionOptions::precision, Trace.numerics,
// the Model's precision fields, the Trainer's lossScale): the rounding edge cases read back from
// a trace, the §6.3 overflow of the naive fp16 softmax, the errors, and WASM = native on a case
// whose values tests/attention/test_precision.cpp pins natively.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { FLAVOURS, loadLab, expectError, randomTensor, tensor } from './harness.mjs';

const SUB = 2 ** -24;  // the smallest fp16 subnormal

// A one-head layer whose projections are the identity without bias: the q, k and v stages are
// x rounded to the format.
function identityLayer(lab, c) {
  const mha = new lab.MultiHeadAttention({ dModel: c, numHeads: 1, bias: false, seed: 1 });
  const eye = new Float32Array(c * c);
  for (let i = 0; i < c; i++) eye[i * c + i] = 1;
  for (const name of ['q_proj.weight', 'k_proj.weight', 'v_proj.weight', 'out_proj.weight']) {
    mha.setParameter(name, tensor([c, c], eye));
  }
  return mha;
}

for (const flavour of FLAVOURS) {
  test(`${flavour}: a trace's q stage holds x rounded to fp16 and bf16 (edge cases)`, async () => {
    const lab = await loadLab(flavour);
    const mha = identityLayer(lab, 4);
    const x = tensor([2, 4], [65504, 65519.99, 65520, SUB, SUB / 2, 3 * SUB / 2, -3.14159265, 1 + 2 ** -11]);
    const fp16 = mha.trace(x, { precision: 'fp16', scale: false });
    assert.deepEqual(Array.from(fp16.stage('q').data), [65504, 65504, Infinity, SUB, 0, 2 * SUB, -3.140625, 1]);
    const n = fp16.numerics();
    assert.equal(n.q.posInf, 1);
    assert.equal(n.q.flushed, 1, 'half the smallest subnormal is a tie and goes to the even 0');
    assert.equal(n.q.maxAbs, 65504);
    assert.equal(n.x.posInf, 0, 'x is the caller\'s, not rounded');
    const bf16 = mha.trace(tensor([1, 4], [1.00390625, 1.01171875, 65504, 3.14159265]), { precision: 'bf16' });
    assert.deepEqual(Array.from(bf16.stage('q').data), [1, 1.015625, 65536, 3.140625], 'ties to even, 8 significant bits');
    const nan = mha.trace(tensor([1, 4], [NaN, 1, 2, 3]), { precision: 'fp16' });
    assert.ok(Number.isNaN(nan.stage('q').data[0]), 'NaN stays NaN');
    assert.ok(nan.numerics().weights.nan > 0, 'and propagates to the weights');
    for (const t of [fp16, bf16, nan]) t.delete();
    mha.delete();
  });

  test(`${flavour}: the naive fp16 softmax overflows past a score of 11.09; in fp32 it holds`, async () => {
    const lab = await loadLab(flavour);
    const mha = identityLayer(lab, 4);
    // one row, no scaling: its score with itself is 3.4² = 11.56 > ln 65520 = 11.09
    const x = tensor([1, 4], [3.4, 0, 0, 0]);
    const naive = mha.trace(x, { precision: 'fp16', softmaxPrecision: 'same', stableSoftmax: false, scale: false });
    assert.equal(naive.numerics().weights.nan, 1);
    assert.ok(Number.isNaN(naive.stage('output').data[0]));
    const fp32 = mha.trace(x, { precision: 'fp16', softmaxPrecision: 'fp32', stableSoftmax: false, scale: false });
    assert.deepEqual(Array.from(fp32.stage('weights').data), [1]);
    const below = mha.trace(tensor([1, 4], [3.3, 0, 0, 0]),
      { precision: 'fp16', softmaxPrecision: 'same', stableSoftmax: false, scale: false });  // 10.89
    assert.equal(below.numerics().weights.nan, 0);
    const stats = naive.numerics();
    assert.deepEqual(Object.keys(stats), naive.stageNames());
    assert.deepEqual(Object.keys(stats.weights).sort(), ['count', 'flushed', 'maxAbs', 'nan', 'negInf', 'posInf']);
    for (const t of [naive, fp32, below]) t.delete();
    mha.delete();
  });

  test(`${flavour}: an unknown precision or softmax precision is an Error naming the valid ones`, async () => {
    const lab = await loadLab(flavour);
    const mha = new lab.MultiHeadAttention({ dModel: 4, numHeads: 2, seed: 1 });
    const x = randomTensor([3, 4], 2);
    expectError(assert, () => mha.forward(x, { precision: 'fp8' }), /unknown precision 'fp8'; valid: fp32, fp16, bf16/);
    expectError(assert, () => mha.forward(x, { softmaxPrecision: 'fp16' }), /unknown softmax precision 'fp16'; valid: fp32, same/);
    expectError(assert, () => new lab.Model({ vocabSize: 5, precision: 'half' }), /unknown precision 'half'/);
    const model = new lab.Model({ vocabSize: 5, maxLen: 8 });
    const task = new lab.Task('copy', { length: 3, vocab: 4 });
    expectError(assert, () => new lab.Trainer(model, task, { lossScale: 'fast' }), /loss scale must be a positive number or 'dynamic', got 'fast'/);
    expectError(assert, () => new lab.Trainer(model, task, { lossScale: -2 }), /loss scale must be a positive number/);
    // the module keeps working
    assert.equal(mha.forward(x, { precision: 'bf16' }).data.length, 12);
    for (const o of [mha, model, task]) o.delete();
  });

  test(`${flavour}: Model and Trainer take precision, softmaxPrecision, stableSoftmax and lossScale`, async () => {
    const lab = await loadLab(flavour);
    const model = new lab.Model({ vocabSize: 6, maxLen: 8, dModel: 16, numHeads: 2, numLayers: 1, ffDim: 32,
      precision: 'fp16', softmaxPrecision: 'same', stableSoftmax: false, seed: 1 });
    const c = model.config();
    assert.equal(c.precision, 'fp16');
    assert.equal(c.softmaxPrecision, 'same');
    assert.equal(c.stableSoftmax, false);
    const again = lab.Model.load(model.save());
    assert.deepEqual(again.config(), c, 'the checkpoint records them');
    const task = new lab.Task('copy', { length: 3, vocab: 4 });
    const trainer = new lab.Trainer(model, task, { lossScale: 'dynamic', batchSize: 4 });
    assert.equal(trainer.options().lossScale, 'dynamic');
    const m = trainer.step(2);
    assert.equal(typeof m.lossScale, 'number');
    assert.equal(typeof m.skipped, 'number');
    assert.ok(m.lossScale > 0 && m.lossScale <= 65536);
    const fixed = new lab.Trainer(again, task, { lossScale: 128, batchSize: 4 });
    assert.equal(fixed.options().lossScale, 128);
    assert.equal(fixed.step().lossScale, 128);
    for (const o of [trainer, fixed, model, again, task]) o.delete();
  });

  test(`${flavour}: WASM = native on a seeded fp16 case`, async () => {
    const lab = await loadLab(flavour);
    const mha = new lab.MultiHeadAttention({ dModel: 8, numHeads: 2, seed: 3 });
    const y = mha.forward(randomTensor([4, 8], 7), { causal: true, precision: 'fp16' });
    // tests/attention/test_precision.cpp, Precision.ASeededFp16CaseGivesThePinnedValues
    assert.deepEqual(Array.from(y.data.slice(0, 4)), [0.298095703125, 0.2626953125, 0.04278564453125, 0.00775146484375]);
    mha.delete();
  });
}
