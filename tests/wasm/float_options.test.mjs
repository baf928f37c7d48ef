// Options the engine keeps as 32-bit floats (Trainer's lr ... clipNorm, Model's float fields,
// generate's temperature, MultiHeadAttention's scale) arrive from JavaScript as doubles. A double
// beyond float's range would be undefined behaviour to convert, so each is refused with an Error
// naming the option and the value, and the module keeps working; float's own extremes still pass.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { FLAVOURS, loadLab, expectError } from './harness.mjs';

const FLT_MAX = 3.4028234663852886e38;
const MODEL = { kind: 'decoder', vocabSize: 7, maxLen: 16, dModel: 16, numHeads: 2, numLayers: 1, ffDim: 32, seed: 1 };
const TRAINER_FLOATS = ['lr', 'minLr', 'weightDecay', 'beta1', 'beta2', 'momentum', 'clipNorm'];
// Beyond float's range: just past FLT_MAX, far past it, and negative.
const OUT_OF_RANGE = [[3.5e38, /got 3\.5e\+38$/], [1e300, /got 1e\+300$/], [-1e39, /got -1e\+39$/]];

for (const flavour of FLAVOURS) {
  test(`${flavour}: float options beyond float32 range are refused by name and value`, async () => {
    const lab = await loadLab(flavour);
    const task = new lab.Task('reverse', { length: 4, vocab: 6 });
    const model = new lab.Model(MODEL);
    const mha = new lab.MultiHeadAttention({ dModel: 8, numHeads: 2, seed: 1 });
    const x = { shape: [3, 8], data: new Float32Array(24).fill(0.5) };
    const works = () => {
      const t = new lab.Trainer(model, task, { seed: 1 });
      assert.equal(t.step(1).losses.length, 1);
      t.delete();
    };
    const fields = lab.modelConfigFields().filter((f) => f.js && (f.name === 'dropout' || f.name === 'attention_scale'));
    assert.deepEqual(fields.map((f) => f.js).sort(), ['attentionScale', 'dropout'], 'the float fields of ModelConfig');
    for (const [value, shown] of OUT_OF_RANGE) {
      for (const key of TRAINER_FLOATS) {
        const e = expectError(assert, () => new lab.Trainer(model, task, { [key]: value }), new RegExp(`new Trainer: option '${key}' must be within float32 range`));
        assert.match(e.message, shown);
        works();
      }
      for (const { js } of fields) {
        expectError(assert, () => new lab.Model({ ...MODEL, [js]: value }), new RegExp(`option '${js}' must be within float32 range .*${shown.source}`));
        works();
      }
      expectError(assert, () => model.generate([1, 2, 3], 2, { temperature: value }), /Model\.generate: option 'temperature' must be within float32 range/);
      expectError(assert, () => mha.forward(x, { scale: value }), /option 'scale' must be within float32 range/);
      works();
    }
    // float's largest value itself converts exactly: it reaches the engine's own checks.
    expectError(assert, () => new lab.Trainer(model, task, { lr: 1e-3, minLr: FLT_MAX }), /min_lr must be in \[0, lr/);
    const t = new lab.Trainer(model, task, { clipNorm: FLT_MAX, seed: 1 });
    assert.ok(Number.isFinite(t.step(1).loss));
    assert.equal(t.options().clipNorm, FLT_MAX);
    for (const o of [t, mha, model, task]) o.delete();
  });
}
