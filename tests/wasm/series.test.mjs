// The series task and forecasters from JavaScript: new lab.Task('series') samples values, time,
// forecast and the seasonal-naive baseline; Transformer (sinusoidal and time-aware) and LSTM
// forecasters train through lab.Trainer with MSE, MAE and the baseline in their metrics;
// model.forecast gives (B, horizon) to plot against the truth; a Transformer forecaster's
// attention maps and trace agree; bad input throws an Error naming it.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { FLAVOURS, loadLab, expectError } from './harness.mjs';

const TASK = { context: 24, horizon: 6, periods: [6, 12], seed: 2 };
const forecaster = (architecture, positional) => ({
  kind: 'forecaster', architecture, positional, numFeatures: 1, horizon: 6, timePeriods: [6, 12], maxLen: 24,
  dModel: 16, numHeads: 2, ffDim: 32, numLayers: 1, seed: 1,
});

for (const flavour of FLAVOURS) {
  test(`${flavour}: the series task samples values, time, forecast and the baseline`, async () => {
    const lab = await loadLab(flavour);
    const task = new lab.Task('series', TASK);
    assert.equal(task.kind(), 'regression');
    assert.equal(task.input(), 'values');
    assert.equal(task.seqLen(), 24);
    assert.equal(task.numClasses(), 6);
    const a = task.sample(3, 7), b = task.sample(3, 7);
    assert.deepEqual(a, b, 'the same seed gives the same batch');
    assert.deepEqual(a.values.shape, [3, 24, 1]);
    assert.deepEqual(a.time.shape, [3, 30]);
    assert.deepEqual(a.forecast.shape, [3, 6]);
    assert.deepEqual(a.baseline.shape, [3, 6]);
    assert.equal(a.tokens, null);
    // The baseline repeats the last season (lcm(6, 12) = 12 steps) of the context.
    for (let j = 0; j < 6; ++j) assert.equal(a.baseline.data[6 + j], a.values.data[24 + 12 + j]);
    // Timestamps run on from the context into the forecast steps.
    assert.equal(a.time.data[1] - a.time.data[0], 1);
    expectError(assert, () => task.encode('1 2'), /the series task has no tokens/);
    expectError(assert, () => new lab.Task('series', { horizon: 0 }), /horizon must be in \[1, 1024\], got horizon 0/);
    expectError(assert, () => new lab.Task('series', { length: 8 }), /option length does not apply to this task/);
    expectError(assert, () => new lab.Task('reverse', { horizon: 4 }), /option horizon does not apply to this task/);
    expectError(assert, () => new lab.Task('series', { periods: 12 }), /periods' must be an array/);
    task.delete();
  });

  test(`${flavour}: forecasters of both architectures train against the seasonal baseline`, async () => {
    const lab = await loadLab(flavour);
    const task = new lab.Task('series', TASK);
    for (const [architecture, positional] of [['transformer', 'sinusoidal'], ['transformer', 'time'], ['lstm', 'sinusoidal']]) {
      const model = new lab.Model(forecaster(architecture, positional));
      assert.equal(model.kind(), 'forecaster');
      assert.deepEqual(model.config().timePeriods, [6, 12]);
      const trainer = new lab.Trainer(model, task, { batchSize: 16, warmupSteps: 5, lr: 3e-3, seed: 1 });
      const before = trainer.evaluate(2);
      const m = trainer.step(60);
      assert.ok(Number.isNaN(m.accuracy));
      for (const key of ['loss', 'mae', 'baselineMse', 'baselineMae']) assert.ok(Number.isFinite(m[key]), `${key}: ${m[key]}`);
      const after = trainer.evaluate(2);
      assert.ok(after.loss < before.loss, `${architecture} ${positional}: mse ${before.loss} -> ${after.loss}`);
      assert.equal(after.baselineMse, before.baselineMse, 'the same held-out batches');
      assert.ok(after.mae > 0 && after.baselineMae > 0);
      // forecast(values, time) -> (B, horizon) to plot against batch.forecast; a [T, F] input gives (horizon).
      const batch = task.sample(2, 5);
      const f = model.forecast(batch.values, batch.time);
      assert.deepEqual(f.shape, [2, 6]);
      const one = model.forecast({ shape: [24, 1], data: batch.values.data.slice(0, 24) },
        { shape: [30], data: batch.time.data.slice(0, 30) });
      assert.deepEqual(one.shape, [6]);
      for (let j = 0; j < 6; ++j) assert.ok(Math.abs(one.data[j] - f.data[j]) < 1e-5);
      expectError(assert, () => model.generate([1, 2], 3), /forecaster/);
      expectError(assert, () => model.forecast({ shape: [2, 24, 3], data: new Float32Array(144) }, batch.time),
        /values \(B, T, F\) must be/);
      // config() and a checkpoint round-trip keep the forecaster.
      const again = lab.Model.load(model.save());
      assert.deepEqual(again.config(), model.config());
      assert.deepEqual(again.forecast(batch.values, batch.time), f);
      again.delete();
      trainer.delete();
      model.delete();
    }
    task.delete();
  });

  test(`${flavour}: a Transformer forecaster's attention maps and trace agree; an LSTM has none`, async () => {
    const lab = await loadLab(flavour);
    const task = new lab.Task('series', TASK);
    const batch = task.sample(2, 3);
    const model = new lab.Model(forecaster('transformer', 'time'));
    const maps = model.attentionMaps(batch.values, { time: batch.time, batch: 1 });
    assert.deepEqual(maps.shape, [1, 2, 24, 24]);
    const trace = model.trace(batch.values, { layer: 0, time: batch.time });
    const w = trace.stage('weights', 0, 1);  // head 0 of batch row 1
    for (let i = 0; i < 24 * 24; ++i) assert.ok(Math.abs(w.data[i] - maps.data[i]) < 1e-6);
    trace.delete();
    expectError(assert, () => model.forecast(batch.values), /time must be \(B, T'\)/);
    const lstm = new lab.Model(forecaster('lstm', 'sinusoidal'));
    expectError(assert, () => lstm.attentionMaps(batch.values, { time: batch.time }), /lstm; it has no attention/);
    lstm.delete();
    model.delete();
    task.delete();
  });
}
