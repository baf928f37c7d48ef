// Sliding-window attention with global tokens (Longformer, article §5.3) from JavaScript: the
// forward/trace options `window` and `globalTokens`, and Model's `attentionWindow`/`globalTokens`.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { FLAVOURS, loadLab, randomTensor } from './harness.mjs';

const T = 9, C = 8, H = 2, W = 2, G = 1;

for (const flavour of FLAVOURS) {
  test(`${flavour}: weights outside the window are exactly 0, inside positive; globals see and are seen`, async () => {
    const lab = await loadLab(flavour);
    const mha = new lab.MultiHeadAttention({ dModel: C, numHeads: H, seed: 3 });
    const x = randomTensor([T, C], 4);
    for (const causal of [false, true]) {
      const tr = mha.trace(x, { causal, window: W, globalTokens: G });
      for (let h = 0; h < H; h++) {
        const w = tr.stage('weights', h).data, m = tr.stage('masked', h).data;
        for (let i = 0; i < T; i++) {
          for (let j = 0; j < T; j++) {
            const visible = (!causal || j <= i) && (Math.abs(i - j) <= W || i < G || j < G);
            if (visible) assert.ok(w[i * T + j] > 0, `causal=${causal} h=${h} (${i}, ${j}) visible`);
            else {
              assert.equal(w[i * T + j], 0, `causal=${causal} h=${h} (${i}, ${j}) hidden`);
              assert.equal(m[i * T + j], -Infinity);
            }
          }
        }
      }
      // A window covering the whole sequence is no window at all.
      const wide = mha.forward(x, { causal, window: T });
      const full = mha.forward(x, { causal });
      assert.deepEqual(wide.data, full.data);
      tr.delete();
    }
    mha.delete();
  });

  test(`${flavour}: a Model with attentionWindow reports it, trains a few steps and round-trips`, async () => {
    const lab = await loadLab(flavour);
    const model = new lab.Model({ vocabSize: 7, maxLen: 16, dModel: 16, numHeads: 2, numLayers: 1, positional: 'rope',
      attentionWindow: 2, globalTokens: 1, seed: 1 });
    assert.equal(model.config().attentionWindow, 2);
    assert.equal(model.config().globalTokens, 1);
    const task = new lab.Task('reverse', { length: 4, vocab: 6 });
    const trainer = new lab.Trainer(model, task, { lr: 3e-3, batchSize: 16, warmupSteps: 0, seed: 1 });
    const before = trainer.evaluate(4);
    const m = trainer.step(20);
    for (const loss of m.losses) assert.ok(Number.isFinite(loss), `loss ${loss}`);
    const after = trainer.evaluate(4);
    assert.ok(after.loss < before.loss, `evaluation loss ${before.loss} -> ${after.loss}`);
    const again = lab.Model.load(model.save());
    assert.equal(again.config().attentionWindow, 2);
    assert.equal(again.config().globalTokens, 1);
    for (const o of [again, trainer, task, model]) o.delete();
  });
}
