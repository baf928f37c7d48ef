// Linear attention (variant 'linear', Katharopoulos et al. 2020) from JavaScript: the trace's
// phi_q, phi_k, weights and context against the formula computed here from the trace's own q, k,
// v; forward (the fast path) against the trace (the recorded path); backward against central
// differences; the refusals as Errors (the module keeps working); and a Model with
// variant 'linear' that trains, generates and round-trips.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { FLAVOURS, loadLab, randomTensor, maxAbsDiff, expectError, checkGradient, dotTensors as dot } from './harness.mjs';

const T = 6, C = 8, H = 4, HKV = 2, D = C / H;

// φ(x) = elu(x) + 1
const phi = (x) => (x > 0 ? x : Math.expm1(x)) + 1;

// Linear attention's definition for one head (README's table): q (T, D), k (S, D), v (S, D) row-major; visible(i, j).
// -> { weights (T, S), context (T, D) } with w_ij = φ(q_i)·φ(k_j) / (Σ_j' φ(q_i)·φ(k_j') + 1e-6).
function reference(q, k, v, S, visible) {
  const weights = new Float64Array(T * S), context = new Float64Array(T * D);
  for (let i = 0; i < T; i++) {
    let den = 0;
    for (let j = 0; j < S; j++) {
      if (!visible(i, j)) continue;
      let a = 0;
      for (let x = 0; x < D; x++) a += phi(q[i * D + x]) * phi(k[j * D + x]);
      weights[i * S + j] = a;
      den += a;
    }
    den += 1e-6;
    for (let j = 0; j < S; j++) {
      weights[i * S + j] /= den;
      for (let e = 0; e < D; e++) context[i * D + e] += weights[i * S + j] * v[j * D + e];
    }
  }
  return { weights, context };
}

function assertClose(actual, expected, what, tol = 1e-5) {
  const { max, index } = maxAbsDiff(actual, expected);
  assert.ok(max <= tol, `${what}: max |difference| ${max} at ${index} (tolerance ${tol})`);
}

for (const flavour of FLAVOURS) {
  test(`${flavour}: the trace's phi_q, phi_k, weights and context follow the formula; forward equals trace`, async () => {
    const lab = await loadLab(flavour);
    const mha = new lab.MultiHeadAttention({ dModel: C, numHeads: H, numKvHeads: HKV, seed: 5 });
    const x = randomTensor([T, C], 6);
    const padding = { shape: [T], data: Uint8Array.from({ length: T }, (_, j) => (j >= T - 2 ? 1 : 0)) };
    for (const [name, options, visible] of [
      ['non-causal', {}, () => true],
      ['causal, rope', { causal: true, positional: 'rope' }, (i, j) => j <= i],
      ['key padding', { keyPaddingMask: padding }, (i, j) => j < T - 2],
    ]) {
      const tr = mha.trace(x, { ...options, variant: 'linear' });
      const names = tr.stageNames();
      for (const s of ['phi_q', 'phi_k', 'weights', 'context']) assert.ok(names.includes(s), `${name}: ${s} recorded`);
      for (const s of ['scores', 'scaled', 'masked']) assert.ok(!names.includes(s), `${name}: no ${s}`);
      assert.equal(tr.numHeads('phi_k'), HKV);
      const rope = options.positional === 'rope';
      for (let h = 0; h < H; h++) {
        const g = Math.floor(h / (H / HKV));
        const q = tr.stage(rope ? 'q_rot' : 'q', h).data, k = tr.stage(rope ? 'k_rot' : 'k', g).data;
        const v = tr.stage('v', g).data;
        assertClose(tr.stage('phi_q', h).data, q.map(phi), `${name}: phi_q head ${h}`);
        assertClose(tr.stage('phi_k', g).data, k.map(phi), `${name}: phi_k kv head ${g}`);
        const ref = reference(q, k, v, T, visible);
        assertClose(tr.stage('weights', h).data, ref.weights, `${name}: weights head ${h}`);
        assertClose(tr.stage('context', h).data, ref.context, `${name}: context head ${h}`);
      }
      // forward takes the fast path (running sums): equal to the recorded path to 1e-5.
      assertClose(mha.forward(x, { ...options, variant: 'linear' }).data, tr.stage('output').data, `${name}: forward`);
      tr.delete();
    }
    mha.delete();
  });

  test(`${flavour}: backward with variant 'linear' matches central differences (causal, RoPE, GQA)`, async () => {
    const lab = await loadLab(flavour);
    const mha = new lab.MultiHeadAttention({ dModel: C, numHeads: H, numKvHeads: HKV, seed: 3 });
    try {
      const x = randomTensor([4, C], 1), w = randomTensor([4, C], 2);
      const options = { causal: true, positional: 'rope', variant: 'linear' };
      const loss = () => dot(mha.forward(x, options), w);
      const back = mha.backward(x, w, options);
      checkGradient(assert, 'gradX', loss, x.data, back.gradX.data);
      const p = mha.getParameter('k_proj.weight');
      checkGradient(assert, 'grads.k_proj.weight', loss, p.data, back.grads['k_proj.weight'].data,
                    () => mha.setParameter('k_proj.weight', p));
    } finally {
      mha.delete();
    }
  });

  test(`${flavour}: an explicit mask, a window or an unknown variant is an Error; the module keeps working`, async () => {
    const lab = await loadLab(flavour);
    const mha = new lab.MultiHeadAttention({ dModel: C, numHeads: H, seed: 1 });
    const x = randomTensor([T, C], 1);
    const attnMask = { shape: [T, T], data: new Uint8Array(T * T) };
    expectError(assert, () => mha.forward(x, { variant: 'linear', attnMask }), /linear attention cannot apply an explicit \(T, S\) mask/);
    expectError(assert, () => mha.trace(x, { variant: 'linear', causal: true, window: 2 }), /sliding window \(window = 2\)/);
    expectError(assert, () => mha.forward(x, { variant: 'performer' }), /'performer'.*full, linear, block_sparse/);
    expectError(assert, () => new lab.Model({ kind: 'decoder', vocabSize: 5, variant: 'linear', attentionWindow: 3 }),
                /variant linear cannot use attention_window 3/);
    assert.deepEqual(mha.forward(x, { variant: 'linear' }).shape, [T, C]);
    mha.delete();
  });

  test(`${flavour}: a Model with variant 'linear' trains, generates and round-trips`, async () => {
    const lab = await loadLab(flavour);
    const model = new lab.Model({ kind: 'decoder', vocabSize: 7, maxLen: 16, dModel: 32, numHeads: 4, numLayers: 2,
                                  positional: 'rope', variant: 'linear', seed: 1 });
    assert.equal(model.config().variant, 'linear');
    const task = new lab.Task('reverse', { length: 4, vocab: 6 });
    const trainer = new lab.Trainer(model, task, { lr: 3e-3, batchSize: 32, warmupSteps: 5, seed: 1 });
    const before = trainer.evaluate(2).loss;
    trainer.step(40);
    const after = trainer.evaluate(2).loss;
    assert.ok(after < before, `loss ${before} -> ${after}`);
    const out = model.generate([3, 1, 4, 0], 5, { temperature: 0 });
    assert.equal(out.length, 9);
    const again = lab.Model.load(model.save());
    assert.equal(again.config().variant, 'linear');
    assert.deepEqual(again.generate([3, 1, 4, 0], 5, { temperature: 0 }), out);
    for (const o of [trainer, task, model, again]) o.delete();
  });
}
