// lab.activationMemory (web/bindings/chapters.cpp), the numbers of the Chapters tab's gradient
// checkpointing figure: what a decoder's blocks keep for backward after one training forward,
// without checkpointing growing with the depth, with it only each block's input; bad options
// reach JavaScript as an Error naming them.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { FLAVOURS, loadLab, expectError } from './harness.mjs';

const SIZE = { dModel: 32, numHeads: 4, ffDim: 128, seqLen: 16, batch: 2 };

for (const flavour of FLAVOURS) {
  test(`${flavour}: activationMemory: per-block bytes kept for backward, with and without checkpointing`, async () => {
    const lab = await loadLab(flavour);
    const input = SIZE.batch * SIZE.seqLen * SIZE.dModel * 4;  // the block input, float32
    for (const layers of [1, 2, 4]) {
      const full = lab.activationMemory({ ...SIZE, numLayers: layers });
      const kept = lab.activationMemory({ ...SIZE, numLayers: layers, gradientCheckpointing: true });
      assert.equal(full.blocks.length, layers);
      assert.equal(full.total, full.blocks.reduce((a, b) => a + b, 0));
      assert.equal(kept.total, kept.blocks.reduce((a, b) => a + b, 0));
      // Every block of the same shape keeps the same bytes.
      assert.deepEqual(new Set(full.blocks).size, 1);
      // Checkpointed: the input plus the dropout generator's state, nothing of the sub-layers.
      for (const b of kept.blocks) assert.ok(b >= input && b < input + 256, `checkpointed block keeps ${b} bytes, input ${input}`);
      // Without: at least q, k, v, the weights (H, T, T per row) and the feed-forward's activations.
      const weights = SIZE.batch * SIZE.numHeads * SIZE.seqLen * SIZE.seqLen * 4;
      for (const b of full.blocks) assert.ok(b > 3 * input + weights + 2 * SIZE.batch * SIZE.seqLen * SIZE.ffDim * 4, `full block ${b}`);
    }
    expectError(assert, () => lab.activationMemory({ ...SIZE }), /activationMemory: the option 'numLayers' is required/);
    expectError(assert, () => lab.activationMemory({ ...SIZE, numLayers: 2, seqLen: 0 }), /seqLen and batch must be positive \(got seqLen 0, batch 2\)/);
    expectError(assert, () => lab.activationMemory({ ...SIZE, numLayers: 2, numHeads: 5 }), /5/);
    expectError(assert, () => lab.activationMemory({ ...SIZE, numLayers: 2, dropout: 0.1 }), /dropout/);
    assert.equal(lab.activationMemory({ ...SIZE, numLayers: 1 }).blocks.length, 1, 'the module still works');
  });
}
