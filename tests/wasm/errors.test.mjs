// Every bad input throws a JavaScript Error whose message names the problem, and the module keeps
// working right after each one.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { FLAVOURS, loadLab, randomTensor, expectError } from './harness.mjs';

const C = 8, T = 4;

function cases(lab, mha, tr) {
  const x = randomTensor([T, C], 1);
  const mask = (shape) => ({ shape, data: new Uint8Array(shape.reduce((a, b) => a * b, 1)) });
  return [
    // constructor
    [() => new lab.MultiHeadAttention({ numHeads: 2 }), /option 'dModel' is required/],
    [() => new lab.MultiHeadAttention({ dModel: 8, heads: 2 }), /unknown option 'heads' \(valid: dModel, numHeads/],
    [() => new lab.MultiHeadAttention({ dModel: 8, numHeads: 3 }), /d_model \(8\) must be divisible by num_heads \(3\)/],
    [() => new lab.MultiHeadAttention({ dModel: 8, numHeads: 4, numKvHeads: 3 }), /num_heads \(4\) must be divisible by num_kv_heads \(3\)/],
    [() => new lab.MultiHeadAttention({ dModel: -8 }), /option 'dModel' must be a non-negative integer, got -8/],
    [() => new lab.MultiHeadAttention({ dModel: 2.5 }), /option 'dModel' must be a non-negative integer/],
    [() => new lab.MultiHeadAttention({ dModel: '8' }), /option 'dModel' must be a number, got string/],
    [() => new lab.MultiHeadAttention({ dModel: 8, bias: 1 }), /option 'bias' must be true or false, got number/],
    [() => new lab.MultiHeadAttention(42), /options must be an object, got number/],
    [() => new lab.MultiHeadAttention({ dModel: 16384 }), /Linear: the weight needs 268435456 floats \(1024 MiB\), over the budget of 67108864 floats/],
    [() => new lab.MultiHeadAttention({ dModel: 1 << 20 }), /the weight would overflow the address space/],
    [() => new lab.MultiHeadAttention({ dModel: 2 ** 40 }), /option 'dModel' must be a non-negative integer/],
    [() => new lab.MultiHeadAttention(), /option 'dModel' is required/],
    // tensors
    [() => mha.forward({ shape: [T, C] }), /x\.data must be a Float32Array, got undefined/],
    [() => mha.forward({ shape: [T, C], data: [1, 2, 3] }), /x\.data must be a Float32Array, got Array/],
    [() => mha.forward({ shape: [T, C], data: new Float64Array(T * C) }), /x\.data must be a Float32Array, got Float64Array/],
    [() => mha.forward({ shape: [T, C], data: new Float32Array(5) }), /x\.shape \(4, 8\) holds 32 elements but data\.length is 5/],
    [() => mha.forward({ shape: [T, 'a'], data: new Float32Array(T) }), /x\.shape\[1\] must be a number, got string/],
    [() => mha.forward({ shape: [2, 2, T, C], data: new Float32Array(4 * T * C) }), /x must have shape \[T, C\] or \[B, T, C\], got \(2, 2, 4, 8\)/],
    [() => mha.forward({ shape: [T, 7], data: new Float32Array(T * 7) }), /must be \(\*, \*, 8\), got \(1, 4, 7\)/],
    [() => mha.forward(null), /x must be an object \{shape: number\[\], data: Float32Array\}, got null/],
    [() => mha.forward(x, { memory: randomTensor([2, 3, C]) }), /memory must have the same rank as x/],
    // options
    [() => mha.forward(x, { casual: true }), /unknown option 'casual' \(valid: causal, keyPaddingMask/],
    [() => mha.forward(x, { causal: 'yes' }), /option 'causal' must be true or false, got string/],
    [() => mha.forward(x, { scale: 'big' }), /option 'scale' must be true, false or a number/],
    [() => mha.forward(x, { scale: NaN }), /option 'scale' must be a finite number/],
    [() => mha.forward(x, { positional: 'alibi' }), /alibi/],
    [() => mha.forward(x, { positional: 'learned' }), /'learned' needs a trained table/],
    [() => mha.forward(x, { stages: ['x'] }), /unknown option 'stages'/],
    [() => mha.trace(x, { stages: ['attention'] }), /unknown stage 'attention'; valid stages are: x, q, k/],
    [() => mha.trace(x, { stages: 'x' }), /option 'stages' must be an array of strings/],
    // masks
    [() => mha.forward(x, { keyPaddingMask: mask([2, T]) }), /key_padding|padding/i],
    [() => mha.forward(x, { attnMask: mask([T, T + 1]) }), /mask/i],
    [() => mha.forward(x, { attnMask: { shape: [T, T], data: 'zeros' } }), /attnMask\.data must be a Uint8Array, another typed array or an array of 0\/1 or booleans, got string/],
    [() => mha.forward(x, { attnMask: { shape: [1, 2], data: Float32Array.of(0, 0.5) } }), /attnMask\.data\[1\] must be 0, 1, false or true/],
    [() => mha.forward(x, { attnMask: { shape: [1, 2], data: [0, 2] } }), /attnMask\.data\[1\] must be 0, 1, false or true/],
    [() => mha.forward(x, { attnMask: { shape: [1, 2], data: Uint8Array.of(0, 7) } }), /attnMask\.data\[1\] must be 0 or 1/],
    [() => mha.forward(x, { checkFinite: true, attnMask: null, memory: null }) && mha.forward({ shape: [1, C], data: new Float32Array(C).fill(NaN) }, { checkFinite: true }), /non-finite value \(nan\) at flat index 0/],
    // parameters
    [() => mha.getParameter('q.weight'), /q\.weight.*q_proj\.weight/],
    [() => mha.getParameter(3), /the parameter name must be a string/],
    [() => mha.setParameter('q_proj.weight', randomTensor([C, C + 1])), /'q_proj\.weight' must have shape \(8, 8\), got \(8, 9\)/],
    // trace
    [() => tr.stage('weight'), /unknown stage 'weight'; valid stages are/],
    [() => tr.stage('weights', 2), /head 2 is out of range for stage 'weights' \(0\.\.1\)/],
    [() => tr.stage('weights', -1), /head -1 is out of range for stage 'weights'/],
    [() => tr.stage('output', 0), /stage 'output' spans the whole width and has no heads/],
    [() => tr.stage('weights', 0, 1), /batch 1 is out of range for stage 'weights' \(0\.\.0\)/],
    [() => tr.stage('q_rot'), /stage 'q_rot' was not recorded in this trace/],
    [() => tr.stage('weights', 0.5), /head must be an integer >= -1/],
    [() => tr.numHeads(null), /the stage name must be a string/],
    // module
    [() => lab.setNumThreads(0), /thread count must be in 1\.\./],
  ];
}

for (const flavour of FLAVOURS) {
  test(`${flavour}: every bad input throws a telling Error and the module keeps working`, async () => {
    const lab = await loadLab(flavour);
    const mha = new lab.MultiHeadAttention({ dModel: C, numHeads: 2, seed: 1 });
    const x = randomTensor([T, C], 1);
    const tr = mha.trace(x);
    const reference = mha.forward(x, { causal: true });
    for (const [fn, re] of cases(lab, mha, tr)) {
      expectError(assert, fn, re);
      assert.deepEqual(mha.forward(x, { causal: true }), reference, `module works after ${re}`);
    }
    tr.delete();
    mha.delete();
  });
}
