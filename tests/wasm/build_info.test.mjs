// Both flavours load, report what they are, and validate the thread count.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { FLAVOURS, loadLab, expectError } from './harness.mjs';
import { pickFlavour } from '../../web/engine/loader.mjs';

const expectedThreads = { threads: 2, single: 1 };  // this machine has 2 cores; the pool holds 4

for (const flavour of FLAVOURS) {
  test(`${flavour}: buildInfo describes the build`, async () => {
    const lab = await loadLab(flavour);
    const info = lab.buildInfo();
    assert.equal(info.flavour, flavour);
    assert.equal(info.simd, true);
    assert.equal(info.threads, expectedThreads[flavour]);
    assert.equal(info.poolSize, flavour === 'threads' ? 4 : 1);
    assert.equal(info.maxMemoryMB, 2048);
    assert.equal(info.maxTensorElements, (2048 * 1024 * 1024) / 8 / 4);
    assert.match(info.version, /^\d+\.\d+\.\d+$/);
  });

  test(`${flavour}: setNumThreads accepts 1..poolSize and names the range otherwise`, async () => {
    const lab = await loadLab(flavour);
    const max = lab.buildInfo().poolSize;
    for (const bad of [0, max + 1, 1.5, -1]) {
      expectError(assert, () => lab.setNumThreads(bad), bad === 1.5 || bad === -1 ? /non-negative integer/ : new RegExp(`in 1\\.\\.${max}`));
    }
    expectError(assert, () => lab.setNumThreads('2'), /must be a number, got string/);
    lab.setNumThreads(1);
    assert.equal(lab.buildInfo().threads, 1);
    lab.setNumThreads(max);
    assert.equal(lab.buildInfo().threads, max);
    lab.setNumThreads(expectedThreads[flavour]);
    assert.equal(lab.buildInfo().threads, expectedThreads[flavour]);
  });

  test(`${flavour}: stageNames lists every stage in canonical order`, async () => {
    const lab = await loadLab(flavour);
    assert.deepEqual(lab.stageNames(), ['x', 'q', 'k', 'v', 'q_rot', 'k_rot', 'phi_q', 'phi_k', 'scores',
      'scaled', 'masked', 'weights', 'context', 'concat', 'output']);
  });
}

test('the loader picks threads in Node and rejects unknown flavours', async () => {
  assert.equal(pickFlavour(), 'threads');
  const { loadAttnLab } = await import('../../web/engine/loader.mjs');
  await assert.rejects(loadAttnLab({ flavour: 'gpu' }), /unknown flavour 'gpu'/);
});
