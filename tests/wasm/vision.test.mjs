// The image side from JavaScript: the shapes task's pixels, a ViT and a Swin Model on images,
// their attention per window (trace and attentionMaps agree, windowLayout places the windows),
// training through lab.Trainer, and an Error naming the problem for bad input.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { FLAVOURS, loadLab, expectError } from './harness.mjs';

const SWIN = { kind: 'encoder', architecture: 'swin', imageSize: 16, patchSize: 4, swinWindow: 2, positional: 'none',
  dModel: 16, numHeads: 2, ffDim: 32, numLayers: 2, numClasses: 6, seed: 1 };
const VIT = { kind: 'encoder', architecture: 'vit', imageSize: 16, patchSize: 4, positional: 'learned', pooling: 'cls',
  dModel: 16, numHeads: 2, ffDim: 32, numLayers: 2, numClasses: 6, seed: 1 };

for (const flavour of FLAVOURS) {
  test(`${flavour}: the shapes task samples seeded images and labels`, async () => {
    const lab = await loadLab(flavour);
    const task = new lab.Task('shapes', { seed: 2 });
    assert.equal(task.input(), 'pixels');
    assert.equal(task.imageSize(), 16);
    assert.equal(task.numClasses(), 6);
    const a = task.sample(4, 7), b = task.sample(4, 7);
    assert.deepEqual(a, b);
    assert.deepEqual(a.pixels.shape, [4, 16, 16]);
    assert.ok(a.pixels.data instanceof Float32Array);
    assert.equal(a.tokens, null);
    assert.deepEqual(a.labels.shape, [4]);
    assert.equal(task.decode(Int32Array.from([1])), 'circle');
    expectError(assert, () => task.encode('circle'), /task 'shapes' reads images; it has no tokens to encode/);
    const reverse = new lab.Task('reverse');
    assert.equal(reverse.input(), 'tokens');
    assert.equal(reverse.imageSize(), 0);
    reverse.delete();
    task.delete();
  });

  test(`${flavour}: Swin attention is addressable per window`, async () => {
    const lab = await loadLab(flavour);
    const task = new lab.Task('shapes');
    const images = task.sample(2, 3).pixels;
    const model = new lab.Model(SWIN);
    assert.equal(model.config().architecture, 'swin');
    assert.deepEqual(model.logits(images).shape, [2, 6]);
    const one = { shape: [16, 16], data: images.data.slice(0, 256) };
    const p = model.predict(one);
    assert.deepEqual(p.shape, [6]);
    assert.ok(Math.abs(p.data.reduce((s, x) => s + x, 0) - 1) < 1e-5);

    // Layer 1: the shifted block of stage 0 (a 4 x 4 map, 2 x 2 windows, shift 1).
    assert.deepEqual(model.windowLayout(1), { grid: 4, window: 2, shift: 1, windowsPerSide: 2, patchSize: 4, cls: false });
    assert.deepEqual(model.windowLayout(2), { grid: 2, window: 2, shift: 0, windowsPerSide: 1, patchSize: 4, cls: false });
    const maps = model.attentionMaps(one, { layer: 1 });
    assert.deepEqual(maps.shape, [4, 2, 4, 4]);
    const trace = model.trace(one, { layer: 1 });
    assert.equal(trace.numBatches('weights'), 4);
    for (let w = 0; w < 4; ++w) {
      for (let h = 0; h < 2; ++h) {
        const m = trace.stage('weights', h, w);
        assert.deepEqual(m.shape, [4, 4]);
        assert.deepEqual([...m.data], [...maps.data.subarray((w * 2 + h) * 16, (w * 2 + h + 1) * 16)]);
      }
    }
    // The last window holds patches rolled in from the opposite edges: patch 0 and patch 3 of it
    // (map patches (3, 3) and (0, 0)) never see each other.
    assert.equal(trace.stage('weights', 0, 3).data[3], 0);
    trace.delete();
    expectError(assert, () => model.trace(one, { layer: 4 }), /layer 4 is out of range: the model has 4 attention layers/);
    expectError(assert, () => model.logits({ shape: [8, 8], data: new Float32Array(64) }), /pixels \(B, S, S\) must be/);
    model.delete();
    task.delete();
  });

  test(`${flavour}: a ViT trains on shapes through lab.Trainer and saves`, async () => {
    const lab = await loadLab(flavour);
    const task = new lab.Task('shapes', { vocab: 4 });
    const model = new lab.Model({ ...VIT, numClasses: 4 });
    assert.deepEqual(model.windowLayout(0), { grid: 4, window: 4, shift: 0, windowsPerSide: 1, patchSize: 4, cls: true });
    const maps = model.attentionMaps(task.sample(1, 1).pixels, { layer: 0 });
    assert.deepEqual(maps.shape, [1, 2, 17, 17]);
    const trainer = new lab.Trainer(model, task, { lr: 3e-3, batchSize: 32, seed: 1 });
    const first = trainer.step();
    const last = trainer.step(60);
    assert.ok(last.loss < first.loss, `loss ${first.loss} -> ${last.loss}`);
    const again = lab.Model.load(model.save());
    const images = task.sample(3, 9).pixels;
    assert.deepEqual(again.logits(images), model.logits(images));
    again.delete();
    trainer.delete();
    model.delete();
    task.delete();
  });
}
