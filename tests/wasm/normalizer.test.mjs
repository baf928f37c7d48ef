// The sigmoid and ReLU normalisers and tied W_Q = W_K from JavaScript: the single-call option
// `normalizer` (weights against a reference computed here from the masked scores, the flash
// path against the recorded one, values pinned to the native build's), the Model fields
// `normalizer` and `tieQK`, and the errors for unknown values and refused combinations.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { FLAVOURS, loadLab, randomTensor } from './harness.mjs';

const T = 6, C = 8, H = 2;

// The normalisers' definitions (README's table): s the scaled, masked score, n the keys the row may see.
function referenceWeight(normalizer, s, n) {
  if (s === -Infinity || n === 0) return 0;
  if (normalizer === 'sigmoid') return 1 / (1 + Math.exp(-(s - Math.log(n))));
  return Math.max(s, 0) / n;
}

// x[i] = ((7·i) mod 13 − 6) / 8: exact in float32, the same input as the native test
// (tests/attention/test_normalizer.cpp, Normalizer.NativeValuesForTheWasmTest).
function pinnedInput() {
  const data = new Float32Array(T * C);
  for (let i = 0; i < data.length; i++) data[i] = (((7 * i) % 13) - 6) / 8;
  return { shape: [T, C], data };
}

// output[0..4) of MultiHeadAttention({dModel: 8, numHeads: 2, seed: 3}) on pinnedInput(), causal.
const NATIVE = {
  sigmoid: [0.18986231, 0.21546906, -0.030853612, -0.0080161244],
  relu: [0.086557277, 0.11474688, -0.023693033, 0.0029844027],
};

for (const flavour of FLAVOURS) {
  test(`${flavour}: weights follow the formulas, masked keys weigh exactly 0, flash = recorded`, async () => {
    const lab = await loadLab(flavour);
    const mha = new lab.MultiHeadAttention({ dModel: C, numHeads: H, seed: 3 });
    const x = randomTensor([T, C], 5);
    const padding = { shape: [T], data: new Uint8Array([0, 0, 0, 0, 1, 1]) };
    for (const normalizer of ['sigmoid', 'relu']) {
      for (const options of [{ causal: true }, { keyPaddingMask: padding }, { causal: true, window: 1, globalTokens: 1 }]) {
        const tr = mha.trace(x, { ...options, normalizer });
        for (let h = 0; h < H; h++) {
          const w = tr.stage('weights', h).data, m = tr.stage('masked', h).data;
          for (let i = 0; i < T; i++) {
            let n = 0;
            for (let j = 0; j < T; j++) n += m[i * T + j] === -Infinity ? 0 : 1;
            for (let j = 0; j < T; j++) {
              const want = referenceWeight(normalizer, m[i * T + j], n);
              if (m[i * T + j] === -Infinity) assert.equal(w[i * T + j], 0);
              else assert.ok(Math.abs(w[i * T + j] - want) <= 1e-6 + 1e-5 * Math.abs(want), `${normalizer} (${i}, ${j})`);
            }
          }
        }
        // forward() without an observer takes the flash path.
        const fast = mha.forward(x, { ...options, normalizer });
        const recorded = tr.stage('output').data;
        for (let i = 0; i < fast.data.length; i++) {
          assert.ok(Math.abs(fast.data[i] - recorded[i]) <= 1e-5, `${normalizer} output[${i}]`);
        }
        tr.delete();
      }
    }
    mha.delete();
  });

  test(`${flavour}: the same values as the native build`, async () => {
    const lab = await loadLab(flavour);
    const mha = new lab.MultiHeadAttention({ dModel: C, numHeads: H, seed: 3 });
    for (const normalizer of ['sigmoid', 'relu']) {
      const y = mha.forward(pinnedInput(), { causal: true, normalizer });
      NATIVE[normalizer].forEach((want, i) => assert.ok(Math.abs(y.data[i] - want) <= 1e-5, `${normalizer} [${i}] ${y.data[i]} vs ${want}`));
    }
    mha.delete();
  });

  test(`${flavour}: an unknown normaliser is an Error naming it and the valid ones; the module keeps working`, async () => {
    const lab = await loadLab(flavour);
    const mha = new lab.MultiHeadAttention({ dModel: C, numHeads: H, seed: 3 });
    const x = randomTensor([T, C], 5);
    // Every normaliser the engine declares (core/choice.hpp), in its order.
    const valid = lab.choices().find((c) => c.type === 'Normalizer').values.map((v) => v.name).join(', ');
    assert.ok(valid.startsWith('softmax, sigmoid, relu'), valid);
    assert.throws(() => mha.forward(x, { normalizer: 'tanh' }), (e) => e instanceof Error &&
      /'tanh'/.test(e.message) && e.message.endsWith(`valid: ${valid}`));
    assert.throws(() => mha.trace(x, { normalizer: 'tanh' }), /'tanh'/);
    assert.throws(() => new lab.Model({ vocabSize: 7, normalizer: 'tanh' }), (e) => e instanceof Error &&
      e.message.endsWith(`unknown normalizer 'tanh'; valid: ${valid}`));
    assert.throws(() => new lab.Model({ vocabSize: 7, numHeads: 4, numKvHeads: 2, tieQK: true }), /tie_qk needs num_kv_heads = num_heads/);
    assert.equal(mha.forward(x, { normalizer: 'relu' }).data.length, T * C);
    mha.delete();
  });

  test(`${flavour}: a Model with a normaliser and tieQK reports them, stores W_Q once, trains and round-trips`, async () => {
    const lab = await loadLab(flavour);
    for (const normalizer of ['sigmoid', 'relu']) {
      const model = new lab.Model({ vocabSize: 7, maxLen: 16, dModel: 16, numHeads: 2, numLayers: 1, positional: 'rope',
        normalizer, tieQK: true, seed: 1 });
      assert.equal(model.config().normalizer, normalizer);
      assert.equal(model.config().tieQK, true);
      const names = model.parameterNames();
      assert.ok(names.includes('blocks.0.attn.q_proj.weight'), names.join(' '));
      assert.ok(!names.some((n) => n.includes('k_proj')), names.join(' '));
      const task = new lab.Task('reverse', { length: 4, vocab: 6 });
      const trainer = new lab.Trainer(model, task, { lr: 3e-3, batchSize: 16, warmupSteps: 0, seed: 1 });
      const before = trainer.evaluate(4);
      const m = trainer.step(20);
      for (const loss of m.losses) assert.ok(Number.isFinite(loss), `loss ${loss}`);
      const after = trainer.evaluate(4);
      assert.ok(after.loss < before.loss, `${normalizer}: evaluation loss ${before.loss} -> ${after.loss}`);
      const again = lab.Model.load(model.save());
      assert.equal(again.config().normalizer, normalizer);
      assert.equal(again.config().tieQK, true);
      for (const o of [again, trainer, task, model]) o.delete();
    }
  });
}
