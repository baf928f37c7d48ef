// The cross-modal side from JavaScript: the caption_match task's images and captions, a
// crossmodal Model on { tokens, images } (logits, predict, the cross-attention maps of each word
// over the patches against the trace), training with the match and the clip loss through
// lab.Trainer with attention statistics, checkpoints, and an Error naming the problem for bad input.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { FLAVOURS, loadLab, expectError } from './harness.mjs';

const CROSS = { kind: 'encoder', architecture: 'crossmodal', vocabSize: 10, numClasses: 2, imageSize: 16, patchSize: 4,
  positional: 'learned', dModel: 16, numHeads: 2, ffDim: 32, numLayers: 1, seed: 1 };

for (const flavour of FLAVOURS) {
  test(`${flavour}: caption_match samples seeded images, captions and labels`, async () => {
    const lab = await loadLab(flavour);
    assert.ok(lab.taskNames().includes('caption_match'));
    const task = new lab.Task('caption_match', { vocab: 4, seed: 2 });
    assert.equal(task.input(), 'paired');
    assert.equal(task.imageSize(), 16);
    assert.equal(task.vocabSize(), 10);
    assert.equal(task.seqLen(), 4);
    assert.equal(task.numClasses(), 2);
    const a = task.sample(4, 7), b = task.sample(4, 7);
    assert.deepEqual(a, b);
    assert.deepEqual(a.pixels.shape, [4, 16, 16]);
    assert.deepEqual(a.tokens.shape, [4, 4]);
    assert.deepEqual(a.labels.shape, [4]);
    assert.equal(task.decode(Int32Array.from([5, 1, 6, 8])), 'large circle top left');
    assert.deepEqual([...task.encode('small square bottom right')], [4, 0, 7, 9]);
    task.delete();
  });

  test(`${flavour}: a crossmodal model reads captions with images and shows each word's attention`, async () => {
    const lab = await loadLab(flavour);
    const task = new lab.Task('caption_match', { vocab: 4 });
    const batch = task.sample(3, 5);
    const model = new lab.Model(CROSS);
    const c = model.config();
    assert.equal(c.architecture, 'crossmodal');
    assert.equal(c.embedDim, 0);
    assert.equal(c.loss, 'match');
    const pair = { tokens: batch.tokens, images: batch.pixels };
    assert.deepEqual(model.logits(pair).shape, [3, 2]);
    const one = { tokens: batch.tokens.data.slice(4, 8), images: { shape: [16, 16], data: batch.pixels.data.slice(256, 512) } };
    const p = model.predict(one);
    assert.deepEqual(p.shape, [2]);
    assert.ok(Math.abs(p.data[0] + p.data[1] - 1) < 1e-5);

    // (H, T, N): word t's weights over the 4 x 4 patch grid, rows summing to 1.
    const maps = model.attentionMaps(pair, { batch: 1 });
    assert.deepEqual(maps.shape, [2, 4, 16]);
    for (let r = 0; r < 8; ++r) {
      const row = maps.data.subarray(r * 16, (r + 1) * 16);
      assert.ok(Math.abs(row.reduce((s, x) => s + x, 0) - 1) < 1e-5);
    }
    const trace = model.trace(pair, { layer: 2 });  // text block, image block, cross-attention
    for (let h = 0; h < 2; ++h) {
      const w = trace.stage('weights', h, 1);
      assert.deepEqual(w.shape, [4, 16]);
      const expected = maps.data.subarray(h * 64, (h + 1) * 64);
      for (let i = 0; i < 64; ++i) assert.ok(Math.abs(w.data[i] - expected[i]) < 1e-5);
    }
    trace.delete();
    expectError(assert, () => model.trace(pair, { layer: 3 }), /layer 3 is out of range: the model has 3 attention layers/);
    expectError(assert, () => model.logits(batch.pixels), /Model.logits: unknown option 'shape' \(valid: tokens, images\)/);
    expectError(assert, () => model.logits({ tokens: batch.tokens }), /needs both 'tokens' \(the caption\) and 'images'/);
    expectError(assert, () => model.attentionMaps(pair, { batch: 3 }), /batch 3 is out of range for 3 pairs/);
    expectError(assert, () => new lab.Model({ ...CROSS, loss: 'triplet' }), /unknown loss 'triplet'; valid: match, clip/);
    expectError(assert, () => new lab.Model({ ...CROSS, clipTemperature: 0 }), /clip_temperature must be a positive/);
    // The module still works after the errors.
    assert.deepEqual(model.logits(pair).shape, [3, 2]);
    model.delete();
    task.delete();
  });

  test(`${flavour}: crossmodal models train on caption_match through lab.Trainer with either loss`, async () => {
    const lab = await loadLab(flavour);
    const task = new lab.Task('caption_match', { vocab: 4 });
    for (const loss of ['match', 'clip']) {
      const model = new lab.Model({ ...CROSS, loss, embedDim: 8 });
      const trainer = new lab.Trainer(model, task, { lr: 3e-3, batchSize: 16, seed: 1, trackAttention: true });
      const first = trainer.step();
      const last = trainer.step(40);
      if (loss === 'clip') {
        // The contrastive term gives both encoders a signal from the first step.
        assert.ok(Number.isFinite(last.loss) && last.loss < first.loss, `${loss}: loss ${first.loss} -> ${last.loss}`);
      } else {
        // The match loss alone stays near chance (ln 2) for thousands of steps: no word and no
        // image alone predicts the label (README, cross-modal attention).
        assert.ok(Number.isFinite(last.loss) && Math.abs(last.loss - Math.LN2) < 0.2, `${loss}: loss ${first.loss} -> ${last.loss}`);
      }
      // Statistics of the text block, the image block and the cross-attention, per head.
      assert.equal(last.headEntropy.length, 3 * 2);
      assert.ok(last.maxScore > 0);
      const again = lab.Model.load(model.save());
      assert.deepEqual(again.config(), model.config());
      const batch = task.sample(2, 9);
      const pair = { tokens: batch.tokens, images: batch.pixels };
      assert.deepEqual(again.logits(pair), model.logits(pair));
      again.delete();
      trainer.delete();
      model.delete();
    }
    task.delete();
  });
}
