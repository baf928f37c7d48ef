// Trace: recorded stage names in canonical order, shapes per stage, and the article's invariants
// (softmax rows sum to 1; masked weights are exactly 0 and masked scores exactly -inf).
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { FLAVOURS, loadLab, randomTensor, expectError } from './harness.mjs';

const B = 2, T = 5, C = 12, H = 3, HKV = 1, D = C / H;

for (const flavour of FLAVOURS) {
  test(`${flavour}: stage names, shapes and head counts`, async () => {
    const lab = await loadLab(flavour);
    const mha = new lab.MultiHeadAttention({ dModel: C, numHeads: H, numKvHeads: HKV, seed: 2 });
    const x = randomTensor([B, T, C], 3);
    const plain = mha.trace(x);
    assert.deepEqual(plain.stageNames(), ['x', 'q', 'k', 'v', 'scores', 'scaled', 'masked', 'weights', 'context',
      'concat', 'output']);
    const rope = mha.trace(x, { causal: true, positional: 'rope' });
    assert.deepEqual(rope.stageNames(), ['x', 'q', 'k', 'v', 'q_rot', 'k_rot', 'scores', 'scaled', 'masked',
      'weights', 'context', 'concat', 'output']);
    const shapes = { x: [T, C], q: [T, D], k: [T, D], v: [T, D], q_rot: [T, D], k_rot: [T, D], scores: [T, T],
      scaled: [T, T], masked: [T, T], weights: [T, T], context: [T, D], concat: [T, C], output: [T, C] };
    for (const name of rope.stageNames()) {
      assert.deepEqual(rope.stage(name).shape, shapes[name], name);
      assert.equal(rope.numBatches(name), B, name);
    }
    assert.equal(rope.numHeads('weights'), H);
    assert.equal(rope.numHeads('k'), HKV);  // key/value heads (MQA here)
    assert.equal(rope.numHeads('output'), 1);
    // Default head: 0 for per-head stages, the whole width otherwise; default batch 0.
    assert.deepEqual(rope.stage('weights'), rope.stage('weights', 0, 0));
    assert.deepEqual(rope.stage('concat'), rope.stage('concat', -1, 0));
    // The output stage is what forward returns.
    const y = mha.forward(x, { causal: true, positional: 'rope' });
    assert.deepEqual(rope.stage('output', -1, 1).data, y.data.subarray(T * C));
    plain.delete();
    rope.delete();
    mha.delete();
  });

  test(`${flavour}: 'stages' records only what is asked`, async () => {
    const lab = await loadLab(flavour);
    const mha = new lab.MultiHeadAttention({ dModel: C, numHeads: H, seed: 2 });
    const tr = mha.trace(randomTensor([T, C], 4), { stages: ['output', 'weights'] });
    assert.deepEqual(tr.stageNames(), ['weights', 'output']);  // canonical order, not request order
    expectError(assert, () => tr.stage('scores', 0), /stage 'scores' was not recorded in this trace \(recorded: weights, output\)/);
    tr.delete();
    mha.delete();
  });

  test(`${flavour}: weights rows sum to 1; causal and padded keys get exactly 0 weight and -inf scores`, async () => {
    const lab = await loadLab(flavour);
    const mha = new lab.MultiHeadAttention({ dModel: C, numHeads: H, seed: 9 });
    const lengths = [5, 3];
    const keyPaddingMask = { shape: [B, T], data: Uint8Array.from({ length: B * T }, (_, i) => (i % T >= lengths[Math.floor(i / T)] ? 1 : 0)) };
    const tr = mha.trace(randomTensor([B, T, C], 5), { causal: true, keyPaddingMask, scale: 0.5 });
    for (let b = 0; b < B; b++) {
      for (let h = 0; h < H; h++) {
        const w = tr.stage('weights', h, b).data, m = tr.stage('masked', h, b).data;
        const scores = tr.stage('scores', h, b).data, scaled = tr.stage('scaled', h, b).data;
        for (let i = 0; i < T; i++) {
          let sum = 0;
          for (let j = 0; j < T; j++) {
            const hidden = j > i || j >= lengths[b];
            sum += w[i * T + j];
            assert.equal(scaled[i * T + j], scores[i * T + j] * 0.5);
            if (hidden) {
              assert.equal(w[i * T + j], 0, `weight (${b}, ${h}, ${i}, ${j}) must be exactly 0`);
              assert.equal(m[i * T + j], -Infinity);
            } else {
              assert.ok(w[i * T + j] > 0);
            }
          }
          assert.ok(Math.abs(sum - 1) < 1e-6, `row ${i} sums to ${sum}`);
        }
      }
    }
    tr.delete();
    mha.delete();
  });
}
