// lab.Model: an encoder classifier or decoder LM from JavaScript. Construction and config,
// parameters, logits / predict / attentionMaps / generate, safetensors round trips, equality with
// the native engine on a committed CLI checkpoint, and an Error naming the problem for every bad
// input (with the module still working after each).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import { FIXTURE_DIR, FLAVOURS, loadLab, readFixture, maxAbsDiff, expectError, sliceMatrix } from './harness.mjs';

const DECODER = { kind: 'decoder', vocabSize: 7, maxLen: 16, dModel: 16, numHeads: 4, numLayers: 2, positional: 'rope', seed: 1 };
const ENCODER = { kind: 'encoder', vocabSize: 5, numClasses: 2, dModel: 16, numHeads: 2, numLayers: 1, positional: 'sinusoidal', seed: 2 };
const sameBytes = (a, b) => a.length === b.length && Buffer.compare(Buffer.from(a), Buffer.from(b)) === 0;

for (const flavour of FLAVOURS) {
  test(`${flavour}: config, parameters and numParameters`, async () => {
    const lab = await loadLab(flavour);
    const model = new lab.Model(DECODER);
    const c = model.config();
    assert.deepEqual(
      { ...c },
      { kind: 'decoder', vocabSize: 7, maxLen: 16, dModel: 16, numHeads: 4, numKvHeads: 0, numLayers: 2, ffDim: 64,
        activation: 'gelu', positional: 'rope', norm: 'pre', scale: true, attentionScale: null, dropout: 0,
        tieWeights: false, pooling: 'mean', numClasses: 0, bias: true, gradientCheckpointing: false,
        attentionWindow: 0, globalTokens: 0, architecture: 'transformer', variant: 'full', normalizer: 'softmax',
        tieQK: false, precision: 'fp32', softmaxPrecision: 'fp32', stableSoftmax: true, blockSize: 16, windowBlocks: 1,
        globalBlocks: 1, randomBlocks: 1, sparseSeed: 0, imageSize: 0, patchSize: 4, swinWindow: 4, embedDim: 0,
        loss: 'match', clipTemperature: 0.10000000149011612, numFeatures: 0, horizon: 0, timePeriods: [],
        layerNormEps: Math.fround(1e-5), attentionOnly: false },
    );
    assert.equal(model.kind(), 'decoder');
    const names = model.parameterNames();
    assert.equal(names[0], 'tok_emb.weight');
    assert.ok(names.includes('blocks.1.attn.q_proj.weight') && names.includes('head.weight') && names.includes('ln_f.bias'));
    let total = 0;
    for (const n of names) total += model.getParameter(n).data.length;
    assert.equal(model.numParameters(), total);
    assert.deepEqual(model.getParameter('tok_emb.weight').shape, [7, 16]);

    // config() feeds back into the constructor: same seed, same weights.
    const twin = new lab.Model({ ...c, seed: 1 });
    assert.ok(sameBytes(twin.save(), model.save()));
    const other = new lab.Model({ ...c, seed: 2 });
    assert.ok(!sameBytes(other.save(), model.save()));

    // setParameter copies in; the old tensor we hold is a copy and does not change.
    const w = model.getParameter('blocks.0.ffn.fc1.bias');
    const changed = { shape: w.shape, data: w.data.map((v, i) => v + i) };
    model.setParameter('blocks.0.ffn.fc1.bias', changed);
    assert.deepEqual(model.getParameter('blocks.0.ffn.fc1.bias'), changed);
    assert.notDeepEqual(w, changed);

    const tied = new lab.Model({ ...DECODER, tieWeights: true, numKvHeads: 2, activation: 'relu', norm: 'post', positional: 'learned' });
    assert.ok(!tied.parameterNames().includes('head.weight'));
    assert.ok(tied.parameterNames().includes('pos_emb.weight'));
    assert.equal(tied.config().numKvHeads, 2);
    for (const m of [model, twin, other, tied]) m.delete();
  });

  test(`${flavour}: logits, predict, attentionMaps and generate`, async () => {
    const lab = await loadLab(flavour);
    const model = new lab.Model(DECODER);
    const tokens = Int32Array.of(3, 1, 4, 0, 6, 0, 4, 1);
    const logits = model.logits(tokens);
    assert.deepEqual(logits.shape, [8, 7]);
    assert.deepEqual(model.logits({ shape: [1, 8], data: tokens }).shape, [1, 8, 7]);
    assert.deepEqual(model.logits([...tokens]), logits, 'number[] and Int32Array agree');

    const p = model.predict(tokens);  // decoder: next-token distribution after the last position
    assert.deepEqual(p.shape, [7]);
    assert.ok(Math.abs(p.data.reduce((a, b) => a + b, 0) - 1) < 1e-5);
    const last = logits.data.subarray(7 * 7);
    assert.equal(p.data.indexOf(Math.max(...p.data)), last.indexOf(Math.max(...last)));

    const maps = model.attentionMaps(tokens);
    assert.deepEqual(maps.shape, [2, 4, 8, 8]);
    for (let l = 0; l < 2; l++)
      for (let h = 0; h < 4; h++) {
        const w = sliceMatrix(maps, l, h);
        for (let i = 0; i < 8; i++) {
          let sum = 0;
          for (let j = 0; j < 8; j++) {
            sum += w.data[i * 8 + j];
            if (j > i) assert.equal(w.data[i * 8 + j], 0, 'causal: future keys get exactly 0');
          }
          assert.ok(Math.abs(sum - 1) < 1e-5);
        }
      }
    const batch = { shape: [2, 8], data: Int32Array.of(...tokens, ...tokens.slice().reverse()) };
    assert.deepEqual(model.attentionMaps(batch, { batch: 0 }), maps);
    assert.notDeepEqual(model.attentionMaps(batch, { batch: 1 }).data, maps.data);

    const out = model.generate([3, 1, 4, 0, 6], 4, { temperature: 0 });
    assert.ok(out instanceof Int32Array);
    assert.deepEqual([...out.subarray(0, 5)], [3, 1, 4, 0, 6]);
    assert.equal(out.length, 9);
    assert.deepEqual(model.generate(Int32Array.of(3, 1, 4, 0, 6), 4), out, 'greedy is the default');
    const a = model.generate([3], 12, { temperature: 1.5, seed: 9 }), b = model.generate([3], 12, { temperature: 1.5, seed: 9 });
    assert.deepEqual(a, b, 'sampling is seeded');
    assert.equal(model.generate([3], 0).length, 1);

    const enc = new lab.Model(ENCODER);
    const probs = enc.predict({ shape: [2, 4], data: Int32Array.of(0, 1, 2, 3, 0, 1, 4, 4) },
      { padding: { shape: [2, 4], data: Uint8Array.of(0, 0, 0, 0, 0, 0, 1, 1) } });
    assert.deepEqual(probs.shape, [2, 2]);
    for (const r of [0, 1]) assert.ok(Math.abs(probs.data[2 * r] + probs.data[2 * r + 1] - 1) < 1e-6);
    // Mean pooling ignores padded positions: row 1 equals its unpadded prefix alone.
    const alone = enc.predict([0, 1]);
    assert.deepEqual(alone.shape, [2]);
    assert.ok(maxAbsDiff(alone.data, probs.data.subarray(2)).max < 1e-6);
    assert.deepEqual(enc.logits([0, 1, 2]).shape, [2]);
    const encMaps = enc.attentionMaps([0, 1, 4], { padding: { shape: [3], data: [0, 0, 1] } });
    assert.deepEqual(encMaps.shape, [1, 2, 3, 3]);
    assert.equal(encMaps.data[2], 0, 'padded key gets 0');
    enc.delete();
    model.delete();
  });

  test(`${flavour}: save / load round trips bit-exactly; notes travel as task.* metadata`, async () => {
    const lab = await loadLab(flavour);
    for (const options of [DECODER, ENCODER, { ...DECODER, tieWeights: true, positional: 'learned', norm: 'post', attentionScale: 0.3 }]) {
      const model = new lab.Model(options);
      const bytes = model.save();
      assert.ok(bytes instanceof Uint8Array);
      const again = lab.Model.load(bytes);
      assert.ok(sameBytes(again.save(), bytes), `${options.kind}: save(load(bytes)) == bytes`);
      assert.deepEqual(again.config(), model.config());
      const probe = options.kind === 'encoder' ? [0, 1, 2] : [3, 1, 4];
      assert.deepEqual(again.logits(probe), model.logits(probe));
      const fromBuffer = lab.Model.load(bytes.slice().buffer);
      assert.ok(sameBytes(fromBuffer.save(), bytes), 'an ArrayBuffer loads too');
      for (const m of [again, fromBuffer, model]) m.delete();
    }
    const model = new lab.Model(DECODER);
    const noted = model.save({ task: 'reverse', length: 4, vocab: 6 });
    assert.deepEqual({ ...lab.Model.checkpointNotes(noted) }, { task: 'reverse', length: '4', vocab: '6' });
    assert.deepEqual({ ...lab.Model.checkpointNotes(model.save()) }, {});
    const loaded = lab.Model.load(noted);
    assert.ok(sameBytes(loaded.save(), model.save()), 'notes do not change the weights');
    // loadParameters: same config, new weights.
    const other = new lab.Model({ ...DECODER, seed: 5 });
    other.loadParameters(model.save());
    assert.ok(sameBytes(other.save(), model.save()));
    for (const m of [model, loaded, other]) m.delete();
  });

  test(`${flavour}: the native CLI's checkpoint gives the native engine's logits`, async () => {
    const lab = await loadLab(flavour);
    const bytes = new Uint8Array(fs.readFileSync(path.join(FIXTURE_DIR, 'attnlab_decoder_checkpoint.safetensors')));
    const fx = readFixture('attnlab_decoder_logits');
    const model = lab.Model.load(bytes);
    assert.ok(lab.Model.checkpointNotes(bytes).task, 'the CLI records its task');
    const logits = model.logits({ shape: fx.tensors.tokens.shape, data: fx.tensors.tokens.data });
    assert.deepEqual(logits.shape, fx.tensors.logits.shape);
    const d = maxAbsDiff(logits.data, fx.tensors.logits.data);
    assert.ok(d.max < 1e-5, `max |wasm - native| = ${d.max} at ${d.index}`);
    model.delete();
  });

  test(`${flavour}: bad input throws an Error naming the problem; the module keeps working`, async () => {
    const lab = await loadLab(flavour);
    const model = new lab.Model(DECODER);
    const enc = new lab.Model(ENCODER);
    const good = model.save();
    const truncated = good.slice(0, good.length - 10);
    const flipped = good.slice();
    flipped[12] ^= 0x55;
    const cases = [
      [() => new lab.Model(), /option 'vocabSize' is required/],
      [() => new lab.Model({ vocabSize: 7, dModel: 30, numHeads: 4 }), /d_model \(30\) must be divisible by num_heads \(4\)/],
      [() => new lab.Model({ vocabSize: 7, dmodel: 32 }), /unknown option 'dmodel' \(valid: kind, vocabSize, maxLen, dModel/],
      [() => new lab.Model({ vocabSize: 7, kind: 'gpt' }), /gpt/],
      [() => new lab.Model({ vocabSize: 7, positional: 'alibi' }), /alibi/],
      [() => new lab.Model({ vocabSize: 7, norm: 'middle' }), /middle/],
      [() => new lab.Model({ vocabSize: 7, activation: 'tanh' }), /tanh/],
      [() => new lab.Model({ vocabSize: 7, numHeads: 4, numKvHeads: 3 }), /num_heads \(4\) must be divisible by num_kv_heads \(3\)/],
      [() => new lab.Model({ vocabSize: 7, dModel: 12, numHeads: 4, positional: 'rope' }), /rope/i],
      [() => new lab.Model({ vocabSize: 7, dropout: 1.5 }), /dropout/],
      [() => new lab.Model({ vocabSize: 7, scale: 'yes' }), /option 'scale' must be true or false/],
      [() => new lab.Model({ kind: 'encoder', vocabSize: 7 }), /num_classes|classes/],
      [() => new lab.Model({ vocabSize: 7, dModel: 'wide' }), /option 'dModel' must be a number, got string/],
      [() => new lab.Model({ vocabSize: 1e8, dModel: 32 }), /new Model: a model of this size has up to 6\.4\d*e\+09 parameters/],
      [() => new lab.Model({ vocabSize: 7, dModel: 8192, numHeads: 8, ffDim: 8192 }), /new Model: a model of this size has up to .* parameters; .* MiB, over the budget of 512 MiB/],
      [() => model.logits([3, 7]), /token id 7 .* outside the vocabulary \[0, 7\)/],
      [() => model.logits([3, -1]), /-1/],
      [() => model.logits([3, 0.5]), /tokens\[1\] must be an integer token id/],
      [() => model.logits('3 1'), /tokens must be an Int32Array, an array of integers/],
      [() => model.logits({ shape: [2, 2], data: Int32Array.of(1, 2) }), /holds 4 elements but data\.length is 2/],
      [() => model.logits([3], { padding: { shape: [1], data: [0] } }), /option 'padding' needs an encoder model/],
      [() => model.logits([3], { causal: true }), /unknown option 'causal' \(valid: padding\)/],
      [() => model.attentionMaps({ shape: [2, 2], data: Int32Array.of(1, 2, 3, 4) }, { batch: 2 }), /batch 2 out of range for B = 2/],
      [() => model.attentionMaps([]), /.+/],
      [() => model.generate([], 3), /the prompt must hold at least one token/],
      [() => model.generate([3], -1), /maxNewTokens must be a non-negative integer/],
      [() => model.generate([3], 2, { temperature: -1 }), /temperature must be finite and >= 0/],
      [() => model.generate([3], 2, { topK: 5 }), /unknown option 'topK' \(valid: temperature, seed\)/],
      [() => model.generate({ shape: [2, 1], data: Int32Array.of(1, 2) }, 2), /prompt must be one sequence/],
      [() => model.generate([3], 1e8), /over the budget/],
      [() => enc.generate([1], 2), /this model is an encoder classifier, not a decoder/],
      [() => enc.predict([0, 1], { padding: { shape: [2], data: [1, 1] } }), /all padding|padding/],
      [() => enc.predict([0, 1], { padding: { shape: [3], data: [0, 0, 0] } }), /padding/],
      [() => model.getParameter('blocks.9.attn.q_proj.weight'), /blocks\.9\.attn\.q_proj\.weight.*tok_emb\.weight/],
      [() => model.setParameter('tok_emb.weight', { shape: [7, 15], data: new Float32Array(105) }), /'tok_emb\.weight' must have shape \(7, 16\), got \(7, 15\)/],
      [() => lab.Model.load(new Uint8Array(10)), /safetensors/],
      [() => lab.Model.load(truncated), /safetensors|truncated|size|bytes/i],
      [() => lab.Model.load(flipped), /safetensors|header|JSON/i],
      [() => lab.Model.load('model.safetensors'), /the checkpoint must be a Uint8Array or an ArrayBuffer, got string/],
      [() => lab.Model.load([1, 2, 3]), /must be a Uint8Array or an ArrayBuffer, got Array/],
      [() => model.loadParameters(enc.save()), /config|kind|differs/i],
      [() => model.save('notes'), /notes must be an object/],
      [() => model.save({ task: { name: 'x' } }), /note 'task' must be a string or a number/],
      [() => lab.Model.checkpointNotes(new Uint8Array(3)), /safetensors|header/i],
    ];
    for (const [call, re] of cases) {
      expectError(assert, call, re);
      assert.deepEqual(model.generate([3, 1], 1).length, 3, `still working after ${re}`);
    }
    assert.ok(sameBytes(model.save(), good), 'failed calls left the model as it was');
    model.delete();
    enc.delete();
  });
}

for (const flavour of FLAVOURS) {
  test(`${flavour}: model.trace records every stage of one layer; its weights are attentionMaps[layer]`, async () => {
    const lab = await loadLab(flavour);
    const model = new lab.Model(DECODER);
    const tokens = Int32Array.of(3, 1, 4, 0, 6);
    const maps = model.attentionMaps(tokens); // [L, H, T, T]
    const [L, H, T] = maps.shape;
    for (let l = 0; l < L; l++) {
      const tr = model.trace(tokens, { layer: l });
      for (const name of ['x', 'q', 'k', 'v', 'scores', 'scaled', 'masked', 'weights', 'context', 'concat', 'output']) {
        assert.ok(tr.stageNames().includes(name), `layer ${l} recorded ${name}`);
      }
      assert.equal(tr.numHeads('weights'), H);
      assert.deepEqual(tr.stage('x').shape, [T, DECODER.dModel]);
      for (let h = 0; h < H; h++) {
        const w = tr.stage('weights', h);
        assert.deepEqual(w.shape, [T, T]);
        const off = (l * H + h) * T * T;
        assert.deepEqual(Array.from(w.data), Array.from(maps.data.subarray(off, off + T * T)), `layer ${l} head ${h}`);
        assert.equal(tr.stage('masked', h).data[1], -Infinity, 'causal: query 0 cannot see key 1');
      }
      tr.delete();
    }
    expectError(assert, () => model.trace(tokens, { layer: 2 }), /Model\.trace.*layer 2.*2 layers/);
    expectError(assert, () => model.trace(tokens, { layer: -1 }), /Model\.trace.*layer/);
    expectError(assert, () => model.trace(tokens), /Model\.trace.*layer/);
    expectError(assert, () => model.trace(tokens, { layer: 0, padding: { shape: [5], data: [0, 0, 0, 0, 0] } }), /padding.*encoder/);
    expectError(assert, () => model.trace(tokens, { layer: 0, heads: 1 }), /Model\.trace.*heads/);
    // Still works after the errors.
    model.trace(tokens, { layer: 1 }).delete();

    const enc = new lab.Model(ENCODER);
    const et = Int32Array.of(1, 2, 3, 0);
    const padding = { shape: [4], data: Uint8Array.of(0, 0, 0, 1) };
    const em = enc.attentionMaps(et, { padding });
    const etr = enc.trace(et, { layer: 0, padding });
    const n = em.shape[2] * em.shape[3];
    assert.deepEqual(Array.from(etr.stage('weights', 1).data), Array.from(em.data.subarray(n, 2 * n)));
    etr.delete();
    enc.delete();
    model.delete();
  });
}

// A refused checkpoint says which kind of problem it is (core/error.hpp's FileProblem, the
// Error's `problem`), so the page can say it in its own words; other refusals carry none.
function withHeader(bytes, edit) {
  const n = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
  const text = new TextEncoder().encode(JSON.stringify(edit(header)));
  const out = new Uint8Array(8 + text.length + bytes.length - 8 - n);
  new DataView(out.buffer).setBigUint64(0, BigInt(text.length), true);
  out.set(text, 8);
  out.set(bytes.subarray(8 + n), 8 + text.length);
  return out;
}
function problemOf(call) {
  try {
    call();
  } catch (e) {
    assert.ok(e instanceof Error, 'an Error');
    return e.problem ?? null;
  }
  assert.fail('no error');
}
for (const flavour of FLAVOURS) {
  test(`${flavour}: a refused checkpoint's Error names its problem`, async () => {
    const lab = await loadLab(flavour);
    const model = new lab.Model(DECODER);
    const good = model.save();
    model.delete();
    const length = (n) => { const b = new Uint8Array(16); new DataView(b.buffer).setBigUint64(0, BigInt(n), true); return b; };
    const renamed = withHeader(good, (h) => {
      const { 'tok_emb.weight': emb, ...rest } = h;
      return { ...rest, 'tok_emb.weights': emb };
    });
    const cases = [
      ['too_short', Uint8Array.of(1, 2, 3)],
      ['header_too_long', length(2 ** 40)],
      ['truncated', length(100)],
      ['truncated', good.subarray(0, good.length - 100)],
      ['bad_header', withHeader(new Uint8Array([2, 0, 0, 0, 0, 0, 0, 0, 123, 125]), () => [1, 2])],
      ['not_a_checkpoint', withHeader(good, (h) => ({ ...h, __metadata__: { ...h.__metadata__, format: 'other' } }))],
      ['mismatch', renamed],
      [null, withHeader(good, (h) => ({ ...h, __metadata__: 'not an object' }))],
    ];
    for (const [problem, bytes] of cases) assert.equal(problemOf(() => lab.Model.load(bytes)), problem, `problem ${problem}`);
    assert.equal(problemOf(() => lab.Model.load('model.safetensors')), null, 'a wrong argument is no file problem');
  });
}
