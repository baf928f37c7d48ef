// lab.LSTM in WASM, both flavours: forward, final state and every gradient against the PyTorch
// fixtures (tests/reference/fixtures/lstm_*, the ones the native tests read), gradients against
// central differences through the JS API, errors that are Errors naming the values (the module
// keeps working), and no leak over many calls.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import {
  FLAVOURS, loadLab, readFixture, fixtureNames, maxAbsDiff, randomTensor, expectError, heapSnapshot, assertSameHeap,
  checkGradient, dotTensors as dot,
} from './harness.mjs';

const lstmFixtures = fixtureNames().filter((name) => name.startsWith('lstm_'));

function assertClose(actual, expected, what, atol, rtol = 0) {
  assert.deepEqual(actual.shape, expected.shape, `${what}: shape`);
  for (let i = 0; i < expected.data.length; i++) {
    const d = Math.abs(actual.data[i] - expected.data[i]);
    if (!(d <= atol + rtol * Math.abs(expected.data[i]))) {
      assert.fail(`${what}: |difference| ${d} at flat index ${i} (${actual.data[i]} vs ${expected.data[i]}), `
                  + `max ${maxAbsDiff(actual.data, expected.data).max}`);
    }
  }
}

function lstmFromFixture(lab, fx) {
  const m = fx.metadata;
  const lstm = new lab.LSTM({ inputSize: Number(m.input_size), hiddenSize: Number(m.hidden_size),
                              numLayers: Number(m.num_layers), bias: m.bias === '1', seed: 0 });
  for (const name of lstm.parameterNames()) lstm.setParameter(name, fx.tensors[name]);
  return lstm;
}

for (const flavour of FLAVOURS) {
  test(`${flavour}: the LSTM fixtures are all there`, () => {
    assert.deepEqual(lstmFixtures, ['lstm_basic', 'lstm_nobias', 'lstm_two_layers_state', 'lstm_unbatched_state']);
  });

  for (const name of lstmFixtures) {
    test(`${flavour}: ${name} matches torch.nn.LSTM (forward, final state, gradients)`, async () => {
      const lab = await loadLab(flavour);
      const fx = readFixture(name);
      const t = fx.tensors;
      const lstm = lstmFromFixture(lab, fx);
      try {
        const state = fx.metadata.with_state === '1' ? { h0: t.h0, c0: t.c0 } : {};
        const out = lstm.forward(t.x, state);
        assertClose(out.output, t.output, 'output', 1e-5);
        assertClose(out.h, t.h, 'h', 1e-5);
        assertClose(out.c, t.c, 'c', 1e-5);

        const back = lstm.backward(t.x, t.dout, { ...state, gradH: t.dh, gradC: t.dc });
        assertClose(back.gradX, t['grad.x'], 'gradX', 2e-5, 1e-4);
        if (state.h0) {
          assertClose(back.gradH0, t['grad.h0'], 'gradH0', 2e-5, 1e-4);
          assertClose(back.gradC0, t['grad.c0'], 'gradC0', 2e-5, 1e-4);
        }
        assert.deepEqual(Object.keys(back.grads), lstm.parameterNames());
        for (const p of lstm.parameterNames()) assertClose(back.grads[p], t[`grad.${p}`], `grads.${p}`, 2e-5, 1e-4);
      } finally {
        lstm.delete();
      }
    });
  }

  test(`${flavour}: LSTM gradients match central differences through the JS API`, async () => {
    const lab = await loadLab(flavour);
    const lstm = new lab.LSTM({ inputSize: 3, hiddenSize: 4, numLayers: 2, seed: 7 });
    try {
      const x = randomTensor([2, 3, 3], 1);
      const h0 = randomTensor([2, 2, 4], 2), c0 = randomTensor([2, 2, 4], 3);
      const w = randomTensor([2, 3, 4], 4), wh = randomTensor([2, 2, 4], 5), wc = randomTensor([2, 2, 4], 6);
      const loss = () => {
        const out = lstm.forward(x, { h0, c0 });
        return dot(out.output, w) + dot(out.h, wh) + dot(out.c, wc);
      };
      const back = lstm.backward(x, w, { h0, c0, gradH: wh, gradC: wc });
      const check = (what, values, analytic, write) => checkGradient(assert, what, loss, values, analytic, write);
      check('gradX', x.data, back.gradX.data);
      check('gradH0', h0.data, back.gradH0.data);
      check('gradC0', c0.data, back.gradC0.data);
      for (const name of ['weight_hh_l1', 'bias_ih_l0']) {
        const p = lstm.parameter(name);
        check(`grads.${name}`, p.data, back.grads[name].data, () => lstm.setParameter(name, p));
      }
    } finally {
      lstm.delete();
    }
  });

  test(`${flavour}: LSTM errors are Errors naming the values, and the LSTM keeps working`, async () => {
    const lab = await loadLab(flavour);
    expectError(assert, () => new lab.LSTM({ inputSize: 3 }), /hiddenSize' is required/);
    expectError(assert, () => new lab.LSTM({ inputSize: 3, hiddenSize: 4, numLayers: 0 }), /num_layers must be >= 1, got 0/);
    expectError(assert, () => new lab.LSTM({ inputSize: 3, hiddenSize: 4, layers: 2 }), /layers/);
    const lstm = new lab.LSTM({ inputSize: 3, hiddenSize: 4, numLayers: 2, seed: 1 });
    try {
      const x = randomTensor([2, 5, 3], 1);
      expectError(assert, () => lstm.forward(randomTensor([2, 5, 6], 1)), /inputSize 3.*got last dimension 6/);
      expectError(assert, () => lstm.forward(x, { h0: randomTensor([1, 2, 4], 1) }), /h0.*\[2, 2, 4\].*\(1, 2, 4\)|h0.*\(2, 2, 4\).*\(1, 2, 4\)/);
      expectError(assert, () => lstm.forward(randomTensor([5, 3], 1), { c0: randomTensor([2, 1, 4], 1) }), /c0.*\(2, 4\).*\(2, 1, 4\)/);
      expectError(assert, () => lstm.backward(x, randomTensor([2, 5, 5], 1)), /gradOutput.*\(2, 5, 4\).*\(2, 5, 5\)/);
      expectError(assert, () => lstm.setParameter('weight_ih_l0', randomTensor([16, 4], 1)), /weight_ih_l0.*\(16, 3\).*\(16, 4\)/);
      expectError(assert, () => lstm.parameter('weight_ih_l9'), /weight_ih_l9/);
      expectError(assert, () => lstm.forward(x, { h1: null }), /h1/);
      const out = lstm.forward(x);
      assert.deepEqual(out.output.shape, [2, 5, 4]);
      assert.deepEqual(out.h.shape, [2, 2, 4]);
      const unbatched = lstm.forward(randomTensor([5, 3], 1));
      assert.deepEqual(unbatched.output.shape, [5, 4]);
      assert.deepEqual(unbatched.c.shape, [2, 4]);
      assert.equal(lstm.config().parameterCount, 16 * (3 + 4 + 2) + 16 * (4 + 4 + 2));
    } finally {
      lstm.delete();
    }
  });

  test(`${flavour}: 2,000 LSTM forward + backward calls and 500 failing calls do not leak`, async () => {
    const lab = await loadLab(flavour);
    const lstm = new lab.LSTM({ inputSize: 4, hiddenSize: 6, numLayers: 2, seed: 1 });
    const x = randomTensor([2, 7, 4], 1), dout = randomTensor([2, 7, 6], 2), h0 = randomTensor([2, 2, 6], 3);
    const run = (n) => {
      for (let i = 0; i < n; i++) {
        lstm.forward(x, { h0 });
        lstm.backward(x, dout, { h0, gradH: h0 });
      }
    };
    const fail = (n) => {
      for (let i = 0; i < n; i++) {
        assert.throws(() => lstm.forward(randomTensor([2, 7, 5], 1)), Error);
        assert.throws(() => lstm.backward(x, randomTensor([2, 7, 5], 1), { h0 }), Error);
      }
    };
    run(20);
    fail(5);
    const before = await heapSnapshot(lab);
    run(2_000);
    assertSameHeap(assert, before, await heapSnapshot(lab), 'after 2,000 forward + backward');
    fail(500);
    assertSameHeap(assert, before, await heapSnapshot(lab), 'after 2 x 500 failing calls');
    lstm.delete();
  });
}
