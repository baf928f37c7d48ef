// MultiHeadAttention.backward in WASM, both flavours: gradients of x, memory and every projection
// against PyTorch's (tests/reference/fixtures/mha_grad_*: nn.MultiheadAttention under autograd
// in float64), against central differences through the JS API (RoPE, unbatched), errors that are
// Errors naming the values (the module keeps working), and no leak over many calls.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import {
  FLAVOURS, loadLab, readFixture, mhaFromFixture, optionsFromFixture, maxAbsDiff, randomTensor, expectError,
  heapSnapshot, assertSameHeap, checkGradient, dotTensors as dot,
} from './harness.mjs';

const FIXTURES = ['mha_grad_causal', 'mha_grad_cross'];

function assertClose(actual, expected, what, tol) {
  assert.deepEqual(actual.shape, expected.shape, `${what}: shape`);
  const { max, index } = maxAbsDiff(actual.data, expected.data);
  assert.ok(max <= tol, `${what}: max |difference| ${max} at flat index ${index} (tolerance ${tol})`);
}


for (const flavour of FLAVOURS) {
  for (const name of FIXTURES) {
    test(`${flavour}: ${name}: backward matches torch autograd`, async () => {
      const lab = await loadLab(flavour);
      const fx = readFixture(name);
      const t = fx.tensors;
      const mha = mhaFromFixture(lab, fx);
      try {
        const options = optionsFromFixture(fx);
        assertClose(mha.forward(t.x, options), t.output, 'output', 1e-5);
        const back = mha.backward(t.x, t.dout, options);
        assertClose(back.gradX, t['grad.x'], 'gradX', 2e-5);
        if (t.memory) assertClose(back.gradMemory, t['grad.memory'], 'gradMemory', 2e-5);
        else assert.equal(back.gradMemory, undefined);
        assert.deepEqual(Object.keys(back.grads), mha.parameterNames());
        for (const p of mha.parameterNames()) assertClose(back.grads[p], t[`grad.${p}`], `grads.${p}`, 2e-5);
      } finally {
        mha.delete();
      }
    });
  }

  test(`${flavour}: MultiHeadAttention gradients match central differences (unbatched, RoPE, GQA)`, async () => {
    const lab = await loadLab(flavour);
    const mha = new lab.MultiHeadAttention({ dModel: 8, numHeads: 2, numKvHeads: 1, seed: 3 });
    try {
      const x = randomTensor([4, 8], 1), w = randomTensor([4, 8], 2);
      const options = { causal: true, positional: 'rope' };
      const loss = () => dot(mha.forward(x, options), w);
      const back = mha.backward(x, w, options);
      assert.deepEqual(back.gradX.shape, [4, 8]);
      const check = (what, values, analytic, write) => checkGradient(assert, what, loss, values, analytic, write);
      check('gradX', x.data, back.gradX.data);
      for (const name of ['k_proj.weight', 'out_proj.bias']) {
        const p = mha.getParameter(name);
        check(`grads.${name}`, p.data, back.grads[name].data, () => mha.setParameter(name, p));
      }
    } finally {
      mha.delete();
    }
  });

  test(`${flavour}: MultiHeadAttention.backward errors are Errors naming the values; it keeps working`, async () => {
    const lab = await loadLab(flavour);
    const mha = new lab.MultiHeadAttention({ dModel: 8, numHeads: 2, seed: 1 });
    try {
      const x = randomTensor([2, 3, 8], 1);
      expectError(assert, () => mha.backward(x, randomTensor([2, 3, 7], 2)), /gradOutput.*\(2, 3, 8\).*\(2, 3, 7\)/);
      expectError(assert, () => mha.backward(x, randomTensor([3, 8], 2)), /gradOutput.*\(2, 3, 8\).*\(3, 8\)/);
      expectError(assert, () => mha.backward(randomTensor([2, 3, 6], 1), randomTensor([2, 3, 6], 2)), /6/);
      expectError(assert, () => mha.backward(x, x, { causl: true }), /causl/);
      const back = mha.backward(x, x, { causal: true });
      assert.deepEqual(back.gradX.shape, [2, 3, 8]);
      assert.deepEqual(back.grads['q_proj.weight'].shape, [8, 8]);
    } finally {
      mha.delete();
    }
  });

  test(`${flavour}: 2,000 MultiHeadAttention.backward calls and 500 failing calls do not leak`, async () => {
    const lab = await loadLab(flavour);
    const mha = new lab.MultiHeadAttention({ dModel: 16, numHeads: 4, numKvHeads: 2, seed: 1 });
    const x = randomTensor([2, 6, 16], 1), dout = randomTensor([2, 6, 16], 2);
    const options = { causal: true, positional: 'rope' };
    const run = (n) => { for (let i = 0; i < n; i++) mha.backward(x, dout, options); };
    const fail = (n) => {
      for (let i = 0; i < n; i++) assert.throws(() => mha.backward(x, randomTensor([2, 6, 15], 2), options), Error);
    };
    run(20);
    fail(5);
    const before = await heapSnapshot(lab);
    run(2_000);
    assertSameHeap(assert, before, await heapSnapshot(lab), 'after 2,000 backward calls');
    fail(500);
    assertSameHeap(assert, before, await heapSnapshot(lab), 'after 500 failing calls');
    mha.delete();
  });
}
