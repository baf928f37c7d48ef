// The memory budget: a request over the per-tensor budget (a quarter of MAXIMUM_MEMORY) throws an
// Error naming the size before allocating; requests that fit the budget but not the memory left
// throw an Error too (std::bad_alloc), and the module keeps working. Never an abort.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { loadLab, expectError } from './harness.mjs';

for (const flavour of ['single', 'threads']) {
  test(`${flavour}: the (B, H, T, S) matrix over the budget throws before allocating`, async () => {
    const lab = await loadLab(flavour);
    const mha = new lab.MultiHeadAttention({ dModel: 8, numHeads: 2, seed: 1 });
    const T = 8192;  // 2 heads x 8192 x 8192 floats = 512 MiB > 256 MiB
    const x = { shape: [T, 8], data: new Float32Array(T * 8) };
    // trace() records the weights, so it needs the whole (B, H, T, S) matrix: refused up front.
    expectError(assert, () => mha.trace(x),
      /attention matrix needs 134217728 floats \(512 MiB\), over the budget of 67108864 floats/);
    // forward() records nothing and takes the tiled (flash) path, whose memory grows with T only.
    assert.deepEqual(mha.forward(x).shape, [T, 8]);
    assert.deepEqual(mha.forward({ shape: [2, 8], data: new Float32Array(16) }).shape, [2, 8]);
    mha.delete();
  });
}

test('single: running out of WASM memory throws an Error and the module keeps working', async () => {
  const lab = await loadLab('single');
  const layers = [];
  const fit = lab.buildInfo().maxMemoryMB / 256;  // layers of 256 MiB the module's memory could hold at most
  const error = expectError(assert, () => {
    for (let i = 0; i <= fit; i++) layers.push(new lab.MultiHeadAttention({ dModel: 4096, numHeads: 2 }));  // 256 MiB each
  }, /new MultiHeadAttention: out of WebAssembly memory \(std::bad_alloc\)/);
  assert.ok(layers.length >= fit - 2 && layers.length < fit,
    `${layers.length} layers of 256 MiB fit in ${lab.buildInfo().maxMemoryMB} MiB (${error.message})`);
  const before = lab.heapUsed();
  for (const layer of layers) layer.delete();
  assert.ok(lab.heapUsed() < before - 2 * 256 * 2 ** 20, 'deleting the layers returns their memory');
  const mha = new lab.MultiHeadAttention({ dModel: 8, numHeads: 2, seed: 1 });
  assert.deepEqual(mha.forward({ shape: [2, 8], data: new Float32Array(16) }).shape, [2, 8]);
  mha.delete();
});
