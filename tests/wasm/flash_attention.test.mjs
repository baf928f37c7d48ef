// The tiled (flash) attention path of the WASM build against its recorded (math) path, on
// sequences long enough to span several key tiles (> 128 keys), so the WebAssembly-specific
// tile kernels (4-row micro-tiles, key-major probabilities, exp2) run under every mask variant.
// A forward without a trace takes the flash path; a trace that records the weights forces the
// recorded path, whose 'output' stage is the same layer's output computed the plain way.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { FLAVOURS, loadLab, maxAbsDiff, randomTensor } from './harness.mjs';

const TOL = 2e-5;  // float32 sums over 300 keys in two different orders
const T = 300, B = 2, C = 64;

function paddingMask() {
  const mask = new Uint8Array(B * T);
  for (let j = T - 70; j < T; j++) mask[T + j] = 1;  // batch row 1: the last 70 keys are padding
  for (let j = 130; j < 260; j++) mask[j] = 1;        // batch row 0: one whole key tile and more
  return { shape: [B, T], data: mask };
}

const cases = [
  ['no mask', {}, {}],
  ['causal', {}, { causal: true }],
  ['key padding', {}, { keyPaddingMask: paddingMask() }],
  ['causal sliding window 40 with 4 global tokens', {}, { causal: true, window: 40, globalTokens: 4 }],
  ['grouped-query (1 kv head), RoPE, no scaling', { numKvHeads: 1 }, { positional: 'rope', scale: false }],
];

for (const flavour of FLAVOURS) {
  for (const [name, layerOptions, options] of cases) {
    test(`${flavour}: flash equals the recorded path over ${T} keys, ${name}`, async () => {
      const lab = await loadLab(flavour);
      const mha = new lab.MultiHeadAttention({ dModel: C, numHeads: 2, seed: 3, ...layerOptions });
      const x = randomTensor([B, T, C], 7);
      try {
        const flash = mha.forward(x, options);
        const tr = mha.trace(x, { ...options, stages: ['weights', 'output'] });
        try {
          for (let b = 0; b < B; b++) {
            const recorded = tr.stage('output', -1, b);
            const mine = flash.data.subarray(b * T * C, (b + 1) * T * C);
            const { max, index } = maxAbsDiff(mine, recorded.data);
            assert.ok(max <= TOL, `batch ${b}: max |flash - recorded| ${max} at ${index} (tolerance ${TOL})`);
            assert.ok(mine.every(Number.isFinite), `batch ${b}: finite`);
          }
        } finally {
          tr.delete();
        }
      } finally {
        mha.delete();
      }
    });
  }
}
