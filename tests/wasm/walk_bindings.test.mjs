// The walkthrough's engine calls through the JavaScript API: Trace.flushedCells names the cells
// rounding to fp16 flushed to zero (q = x rounded, with the identity as W_Q), and kvCacheSteps
// with a layer's own parameters and RoPE gives each token the weights of the full causal trace;
// rowStats gives each row of a weights matrix its sum and entropy.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { FLAVOURS, loadLab, expectError, randomTensor, tensor } from './harness.mjs';

const SUB = 2 ** -24;  // the smallest fp16 subnormal

for (const flavour of FLAVOURS) {
  test(`${flavour}: Trace.flushedCells lists the flat indices fp16 flushed, per stage and head`, async () => {
    const lab = await loadLab(flavour);
    const mha = new lab.MultiHeadAttention({ dModel: 4, numHeads: 1, bias: false, seed: 1 });
    const eye = new Float32Array(16);
    for (let i = 0; i < 4; i++) eye[i * 4 + i] = 1;
    for (const name of ['q_proj.weight', 'k_proj.weight', 'v_proj.weight', 'out_proj.weight']) mha.setParameter(name, tensor([4, 4], eye));
    // (2, 4): SUB/2 (a tie, to the even 0) and SUB/4 flush; SUB stays
    const x = tensor([2, 4], [1, SUB / 2, SUB, 2, SUB / 4, 3, 0, 1]);
    const fp16 = mha.trace(x, { precision: 'fp16', scale: false });
    assert.deepEqual(Array.from(fp16.flushedCells('q', 0)), [1, 4]);
    assert.deepEqual(Array.from(fp16.flushedCells('q')), [1, 4], 'head 0 by default');
    assert.equal(fp16.numerics().q.flushed, 2);
    assert.deepEqual(Array.from(fp16.flushedCells('x')), [], 'x is the caller’s, not rounded');
    expectError(assert, () => fp16.flushedCells('q', 3), /Trace.flushedCells: head 3 is out of range/);
    expectError(assert, () => fp16.flushedCells('phi_q'), /not recorded/);
    const fp32 = mha.trace(x, { scale: false });
    assert.deepEqual(Array.from(fp32.flushedCells('q')), []);
    for (const t of [fp16, fp32]) t.delete();
    mha.delete();
  });

  test(`${flavour}: kvCacheSteps with a layer's own parameters and RoPE equals its causal trace`, async () => {
    const lab = await loadLab(flavour);
    const layer = { dModel: 8, numHeads: 2, numKvHeads: 1, seed: 5 };
    const mha = new lab.MultiHeadAttention({ ...layer, bias: true, seed: 9 });  // other weights than seed 5's
    const parameters = {};
    for (const name of mha.parameterNames()) parameters[name] = mha.getParameter(name);
    const x = randomTensor([5, 8], 3);
    const steps = lab.kvCacheSteps(layer, x, { parameters, positional: 'rope' });
    const tr = mha.trace(x, { causal: true, positional: 'rope', stages: ['weights'] });
    for (let h = 0; h < 2; h++) {
      const w = tr.stage('weights', h).data;
      steps.forEach((st, t) => {
        for (let j = 0; j <= t; j++) assert.ok(Math.abs(st.weights[h].data[j] - w[t * 5 + j]) < 1e-6, `head ${h} step ${t} key ${j}`);
      });
    }
    expectError(assert, () => lab.kvCacheSteps(layer, x, { positional: 'sinusoidal' }), /kvCacheSteps: positional 'sinusoidal' is added to x by the caller/);
    expectError(assert, () => lab.kvCacheSteps(layer, x, { parameters: { 'q_proj.weight': tensor([2, 2], [1, 0, 0, 1]) } }), /kvCacheSteps/);
    tr.delete();
    mha.delete();
  });

  test(`${flavour}: rowStats gives each weights row its sum and entropy (nats)`, async () => {
    const lab = await loadLab(flavour);
    const r = lab.rowStats(tensor([3, 2], [0.5, 0.5, 1, 0, 0, 0]));
    assert.deepEqual(Array.from(r.sum.data), [1, 1, 0]);
    assert.ok(Math.abs(r.entropy.data[0] - Math.LN2) < 1e-6);
    assert.deepEqual(Array.from(r.entropy.data).slice(1), [0, 0], 'one-hot and empty rows');
    expectError(assert, () => lab.rowStats(tensor([1, 2, 2], [1, 0, 0, 1])), /rowStats: w must be a \(rows, cols\) matrix, got rank 3/);
  });
}
