// MultiHeadAttention in WASM against the PyTorch golden fixtures (tests/reference/fixtures), for
// both flavours: outputs and per-head attention weights within 1e-5, plus the rotated q/k of the
// RoPE cases and the sinusoidal option.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import {
  FLAVOURS, loadLab, readFixture, fixtureNames, mhaFromFixture, optionsFromFixture, maxAbsDiff, sliceMatrix,
  randomTensor, tensor, expectError,
} from './harness.mjs';

const TOL = 1e-5;
// The attention fixtures: an input, PyTorch's output and per-head weights, and the projections.
const isAttentionFixture = ({ tensors: t, metadata: m }) =>
  m.num_heads !== undefined && ['x', 'output', 'weights', 'q_proj.weight'].every((name) => name in t);
const attentionFixtures = fixtureNames().filter((name) => isAttentionFixture(readFixture(name)));

function assertClose(actual, expected, what) {
  assert.deepEqual(actual.shape, expected.shape, `${what}: shape`);
  const { max, index } = maxAbsDiff(actual.data, expected.data);
  assert.ok(max <= TOL, `${what}: max |difference| ${max} at flat index ${index} (tolerance ${TOL})`);
}

for (const flavour of FLAVOURS) {
  test(`${flavour}: the attention fixtures are all there`, () => {
    assert.ok(attentionFixtures.length >= 12, `found ${attentionFixtures.join(', ')}`);
  });

  for (const name of attentionFixtures) {
    test(`${flavour}: ${name} matches PyTorch`, async () => {
      const lab = await loadLab(flavour);
      const fx = readFixture(name);
      const t = fx.tensors;
      const mha = mhaFromFixture(lab, fx);
      const options = optionsFromFixture(fx);
      try {
        assertClose(mha.forward(t.x, options), { shape: t.output.shape, data: t.output.data }, 'output');

        const tr = mha.trace(t.x, options);
        try {
          const batched = t.x.shape.length === 3;
          const [batches, heads] = batched ? t.weights.shape.slice(0, 2) : [1, t.weights.shape[0]];
          assert.equal(tr.numHeads('weights'), heads);
          for (let b = 0; b < batches; b++) {
            for (let h = 0; h < heads; h++) {
              const expected = batched ? sliceMatrix(t.weights, b, h) : sliceMatrix(t.weights, h);
              assertClose(tr.stage('weights', h, b), expected, `weights batch ${b} head ${h}`);
              if (t.q_rot) assertClose(tr.stage('q_rot', h, b), sliceMatrix(t.q_rot, b, h), `q_rot batch ${b} head ${h}`);
            }
            if (t.k_rot) {
              for (let h = 0; h < t.k_rot.shape[1]; h++) {
                assertClose(tr.stage('k_rot', h, b), sliceMatrix(t.k_rot, b, h), `k_rot batch ${b} kv head ${h}`);
              }
            }
          }
          assertClose(tr.stage('output', -1, 0), batched ? sliceMatrix(t.output, 0) : t.output, 'output stage');
        } finally {
          tr.delete();
        }
      } finally {
        mha.delete();
      }
    });
  }

  test(`${flavour}: positional 'sinusoidal' adds the Vaswani table to x before the layer`, async () => {
    const lab = await loadLab(flavour);
    const pe = readFixture('sinusoidal_pe').tensors.pe;  // (T=12, C=16)
    const [T, C] = pe.shape;
    const mha = new lab.MultiHeadAttention({ dModel: C, numHeads: 4, seed: 3 });
    const x = randomTensor([2, T, C], 7);
    const shifted = tensor(x.shape, x.data.map((v, i) => v + pe.data[i % (T * C)]));
    const tr = mha.trace(x, { positional: 'sinusoidal' });
    assertClose(tr.stage('x', -1, 1), sliceMatrix(shifted, 1), 'x stage after the encoding');
    assertClose(mha.forward(x, { positional: 'sinusoidal' }), mha.forward(shifted), 'output');
    tr.delete();
    mha.delete();
  });

  test(`${flavour}: parameters round-trip and follow PyTorch's names and shapes`, async () => {
    const lab = await loadLab(flavour);
    const mha = new lab.MultiHeadAttention({ dModel: 8, numHeads: 4, numKvHeads: 2, seed: 1 });
    assert.deepEqual(mha.parameterNames().sort(), ['k_proj.bias', 'k_proj.weight', 'out_proj.bias', 'out_proj.weight',
      'q_proj.bias', 'q_proj.weight', 'v_proj.bias', 'v_proj.weight']);
    assert.deepEqual(mha.getParameter('k_proj.weight').shape, [4, 8]);  // (Hkv·D, C)
    assert.deepEqual(mha.config(), { dModel: 8, numHeads: 4, numKvHeads: 2, headDim: 2, bias: true, kvDim: 8, tieQK: false });
    const w = randomTensor([8, 8], 11);
    mha.setParameter('q_proj.weight', w);
    const back = mha.getParameter('q_proj.weight');
    assert.deepEqual(back, { shape: [8, 8], data: w.data });
    back.data[0] = 42;  // a copy: changing it leaves the layer alone
    assert.equal(mha.getParameter('q_proj.weight').data[0], w.data[0]);
    const noBias = new lab.MultiHeadAttention({ dModel: 6, numHeads: 3, bias: false });
    assert.deepEqual(noBias.parameterNames().sort(), ['k_proj.weight', 'out_proj.weight', 'q_proj.weight', 'v_proj.weight']);
    noBias.delete();
    mha.delete();
  });

  test(`${flavour}: tieQK shares W_Q as W_K: no k_proj, symmetric scores; refused with fewer key heads`, async () => {
    const lab = await loadLab(flavour);
    const mha = new lab.MultiHeadAttention({ dModel: 8, numHeads: 2, tieQK: true, seed: 5 });
    assert.equal(mha.config().tieQK, true);
    assert.deepEqual(mha.parameterNames().sort(), ['out_proj.bias', 'out_proj.weight', 'q_proj.bias', 'q_proj.weight',
      'v_proj.bias', 'v_proj.weight']);
    // q = k for every position, so each head's (unmasked) score matrix equals its transpose.
    const tr = mha.trace(randomTensor([5, 8], 9), { stages: ['scores'] });
    for (let h = 0; h < 2; h++) {
      const s = tr.stage('scores', h);
      const [T, S] = s.shape;
      for (let i = 0; i < T; i++) for (let j = 0; j < S; j++) assert.ok(Math.abs(s.data[i * S + j] - s.data[j * S + i]) <= 1e-5 * (1 + Math.abs(s.data[i * S + j])));
    }
    tr.delete();
    mha.delete();
    expectError(assert, () => new lab.MultiHeadAttention({ dModel: 8, numHeads: 2, numKvHeads: 1, tieQK: true }), /tie_qk/);
    expectError(assert, () => new lab.MultiHeadAttention({ dModel: 8, tieQK: 'yes' }), /tieQK/);
  });

  test(`${flavour}: masks may be a Uint8Array, another typed array, number[] or boolean[]`, async () => {
    const lab = await loadLab(flavour);
    const mha = new lab.MultiHeadAttention({ dModel: 8, numHeads: 2, seed: 4 });
    const x = randomTensor([2, 3, 8], 6);
    const bits = [0, 0, 1, 0, 1, 1];  // (B=2, S=3)
    const outputs = [Uint8Array.from(bits), Float32Array.from(bits), bits, bits.map(Boolean)]
      .map((data) => mha.forward(x, { keyPaddingMask: { shape: [2, 3], data } }));
    for (const y of outputs.slice(1)) assert.deepEqual(y, outputs[0]);
    assert.notDeepEqual(outputs[0], mha.forward(x));
    mha.delete();
  });

  test(`${flavour}: the same seed gives the same layer, unbatched input equals a batch of one`, async () => {
    const lab = await loadLab(flavour);
    const a = new lab.MultiHeadAttention({ dModel: 16, numHeads: 2, seed: 5 });
    const b = new lab.MultiHeadAttention({ dModel: 16, numHeads: 2, seed: 5 });
    assert.deepEqual(a.getParameter('v_proj.weight'), b.getParameter('v_proj.weight'));
    const x = randomTensor([6, 16], 2);
    const y2 = a.forward(x, { causal: true, positional: 'rope' });
    const y3 = a.forward({ shape: [1, 6, 16], data: x.data }, { causal: true, positional: 'rope' });
    assert.deepEqual(y2.shape, [6, 16]);
    assert.deepEqual(y3.shape, [1, 6, 16]);
    assert.deepEqual(y2.data, y3.data);
    a.delete();
    b.delete();
  });
}

test('threads and single give bit-identical results', async () => {
  const [threaded, single] = await Promise.all(FLAVOURS.map(loadLab));
  const fx = readFixture('mha_large');
  const outs = [threaded, single].map((lab) => {
    const mha = mhaFromFixture(lab, fx);
    const y = mha.forward(fx.tensors.x, optionsFromFixture(fx));
    mha.delete();
    return y;
  });
  assert.deepEqual(outs[0], outs[1]);
});
