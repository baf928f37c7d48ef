// Block-sparse attention (BigBird, article §5.3) from JavaScript: lab.sparseLayout equals the
// native layout for the same seed (the matrix tests/attention/test_block_sparse.cpp pins), the
// forward options' output equals full attention with the layout expanded into attnMask, a Model
// with variant 'block_sparse' trains and round-trips, and bad input is an Error naming the value
// with the module still working.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { FLAVOURS, loadLab, randomTensor, maxAbsDiff, expectError } from './harness.mjs';

// sparse_layout(150, 150, b = 16, w = 1, g = 1, r = 2, seed 7), as the native test pins it.
const PINNED = ['1111111111', '1110001100', '1111001001', '1111100001', '1101110010',
  '1110111000', '1001111100', '1010001111', '1110000111', '1001010011'];

const rows = (layout) => {
  const [r, c] = layout.shape;
  return Array.from({ length: r }, (_, i) => Array.from(layout.data.slice(i * c, (i + 1) * c)).join(''));
};

// The (T, S) attnMask a layout means: 1 = hidden.
function expand(layout, b, t, s) {
  const cols = layout.shape[1], data = new Uint8Array(t * s);
  for (let i = 0; i < t; i++) {
    for (let j = 0; j < s; j++) data[i * s + j] = layout.data[Math.floor(i / b) * cols + Math.floor(j / b)] ? 0 : 1;
  }
  return { shape: [t, s], data };
}

for (const flavour of FLAVOURS) {
  test(`${flavour}: sparseLayout equals the native layout for the same seed`, async () => {
    const lab = await loadLab(flavour);
    const layout = lab.sparseLayout(150, 150, { blockSize: 16, windowBlocks: 1, globalBlocks: 1, randomBlocks: 2, sparseSeed: 7 });
    assert.deepEqual(layout.shape, [10, 10]);
    assert.ok(layout.data instanceof Uint8Array);
    assert.deepEqual(rows(layout), PINNED);
    // causal: random blocks only among earlier key blocks (after the window's i + 1 nothing is
    // live, except in the global row 0)
    const causal = lab.sparseLayout(150, 150, { blockSize: 16, randomBlocks: 2, sparseSeed: 7, causal: true });
    rows(causal).slice(1).forEach((row, k) => assert.equal(row.slice(k + 3).replaceAll('0', ''), '', `row ${k + 1}: ${row}`));
    assert.deepEqual(lab.sparseLayout(40, 10).shape, [3, 1]);  // defaults: b = 16
  });

  test(`${flavour}: forward with variant block_sparse equals full attention with the expanded mask`, async () => {
    const lab = await loadLab(flavour);
    const T = 40, C = 16;
    const mha = new lab.MultiHeadAttention({ dModel: C, numHeads: 4, numKvHeads: 2, seed: 3 });
    const x = randomTensor([2, T, C], 5);
    const sparse = { blockSize: 8, windowBlocks: 1, globalBlocks: 1, randomBlocks: 1, sparseSeed: 4 };
    for (const causal of [false, true]) {
      const layout = lab.sparseLayout(T, T, { ...sparse, causal });
      const keyPaddingMask = { shape: [2, T], data: Uint8Array.from({ length: 2 * T }, (_, i) => (i >= T + 31 ? 1 : 0)) };
      const got = mha.forward(x, { causal, keyPaddingMask, variant: 'block_sparse', ...sparse });
      const want = mha.forward(x, { causal, keyPaddingMask, attnMask: expand(layout, 8, T, T) });
      const { max } = maxAbsDiff(got.data, want.data);
      assert.ok(max <= 1e-5, `causal=${causal}: max |difference| ${max}`);
      // the recorded path: dead blocks get weight exactly 0
      const tr = mha.trace(x, { causal, variant: 'block_sparse', ...sparse, stages: ['weights'] });
      const w = tr.stage('weights', 0, 1).data;
      for (let i = 0; i < T; i++) {
        for (let j = 0; j < T; j++) {
          if (!layout.data[Math.floor(i / 8) * layout.shape[1] + Math.floor(j / 8)]) assert.equal(w[i * T + j], 0);
        }
      }
      tr.delete();
    }
    mha.delete();
  });

  test(`${flavour}: a Model with variant block_sparse trains and round-trips`, async () => {
    const lab = await loadLab(flavour);
    const model = new lab.Model({ vocabSize: 7, maxLen: 16, dModel: 16, numHeads: 2, numLayers: 1, positional: 'rope',
      variant: 'block_sparse', blockSize: 4, windowBlocks: 1, globalBlocks: 1, randomBlocks: 1, sparseSeed: 2, seed: 1 });
    assert.equal(model.config().blockSize, 4);
    const task = new lab.Task('reverse', { length: 4, vocab: 6 });
    const trainer = new lab.Trainer(model, task, { lr: 3e-3, batchSize: 16, warmupSteps: 0, seed: 1 });
    const before = trainer.evaluate(4);
    const m = trainer.step(20);
    for (const loss of m.losses) assert.ok(Number.isFinite(loss), `loss ${loss}`);
    const after = trainer.evaluate(4);
    assert.ok(after.loss < before.loss, `evaluation loss ${before.loss} -> ${after.loss}`);
    const again = lab.Model.load(model.save());
    const c = again.config();
    assert.deepEqual([c.variant, c.blockSize, c.windowBlocks, c.globalBlocks, c.randomBlocks, c.sparseSeed],
      ['block_sparse', 4, 1, 1, 1, 2]);
    for (const o of [again, trainer, task, model]) o.delete();
  });

  test(`${flavour}: bad block-sparse input is an Error naming the value, and the module keeps working`, async () => {
    const lab = await loadLab(flavour);
    const mha = new lab.MultiHeadAttention({ dModel: 8, numHeads: 2, seed: 1 });
    const x = randomTensor([6, 8], 2);
    expectError(assert, () => lab.sparseLayout(8, 8, { blockSize: 0 }), /block size > 0, got 0/);
    expectError(assert, () => lab.sparseLayout(8, 8, { blockSize: -1 }), /blockSize/);
    expectError(assert, () => lab.sparseLayout(8, 8, { blokSize: 4 }), /blokSize/);
    expectError(assert, () => mha.forward(x, { variant: 'block_sparse', blockSize: 0 }), /block size > 0, got 0/);
    expectError(assert, () => mha.forward(x, { variant: 'block_sparse', window: 2 }),
      /block_sparse attention with a sliding window \(window 2\)/);
    expectError(assert, () => mha.forward(x, { blockSize: 4 }), /'blockSize' applies only with variant 'block_sparse', got variant 'full'/);
    expectError(assert, () => mha.forward(x, { variant: 'sparse' }), /unknown attention variant 'sparse'/);
    expectError(assert, () => new lab.Model({ vocabSize: 5, variant: 'block_sparse', blockSize: 0 }), /sparse_block_size must be positive, got 0/);
    // still working
    assert.deepEqual(mha.forward(x, { variant: 'block_sparse', blockSize: 2 }).shape, [6, 8]);
    mha.delete();
  });
}
