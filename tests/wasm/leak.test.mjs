// No leak: 10,000 forward + trace calls with .delete() and 1,000 failing calls leave the WASM
// heap (malloc'd bytes and memory size), the stack and the emval handle table where they were.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { FLAVOURS, loadLab, randomTensor, heapSnapshot as snapshot, assertSameHeap } from './harness.mjs';

const assertSame = (before, after, what) => assertSameHeap(assert, before, after, what);

for (const flavour of FLAVOURS) {
  test(`${flavour}: 10,000 forward + trace calls and 1,000 failing calls do not leak`, async () => {
    const lab = await loadLab(flavour);
    const mha = new lab.MultiHeadAttention({ dModel: 16, numHeads: 4, numKvHeads: 2, seed: 1 });
    const x = randomTensor([2, 6, 16], 1);
    const options = { causal: true, positional: 'rope', keyPaddingMask: { shape: [2, 6], data: new Uint8Array(12) } };
    const run = (n) => {
      for (let i = 0; i < n; i++) {
        mha.forward(x, options);
        const tr = mha.trace(x, options);
        tr.stage('weights', i % 4, i % 2);
        tr.delete();
      }
    };
    const fail = (n) => {
      const bad = { shape: [2, 6, 15], data: new Float32Array(180) };
      for (let i = 0; i < n; i++) {
        for (const call of [
          () => mha.forward(bad, options),
          () => mha.trace(x, { stages: ['nope'] }),
          () => new lab.MultiHeadAttention({ dModel: 16, numHeads: 3 }),
          () => mha.setParameter('q_proj.weight', bad),
        ]) {
          assert.throws(call, Error);
        }
      }
    };
    run(100);  // warm up: scratch buffers, the kept error message, pool state
    fail(10);
    const before = await snapshot(lab);
    run(10_000);
    assertSame(before, await snapshot(lab), 'after 10,000 forward + trace');
    fail(1_000);
    assertSame(before, await snapshot(lab), 'after 4 x 1,000 failing calls');
    mha.delete();
  });
}
