// No leak: 10,000 forward + trace calls with .delete() and 1,000 failing calls leave the WASM
// heap (malloc'd bytes and memory size), the stack and the emval handle table where they were.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as tick } from 'node:timers/promises';

import { FLAVOURS, loadLab, randomTensor } from './harness.mjs';

const SLACK = 4096;  // bytes: allocator bookkeeping may move by a few KB

async function snapshot(lab) {
  await tick();  // let queued microtasks (the stack repair after a JS throw) run
  return { heap: lab.heapUsed(), memory: lab.HEAP8.length, stack: lab.stackUsed(), handles: lab.count_emval_handles() };
}

function assertSame(before, after, what) {
  assert.ok(Math.abs(after.heap - before.heap) <= SLACK, `${what}: heapUsed ${before.heap} -> ${after.heap}`);
  assert.equal(after.memory, before.memory, `${what}: HEAP8.length`);
  assert.equal(after.stack, before.stack, `${what}: stackUsed`);
  assert.equal(after.handles, before.handles, `${what}: emval handles`);
}

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
