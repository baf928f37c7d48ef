// The interpretability tools in JavaScript (web/bindings/interp.cpp): head scores against the
// definitions computed here from model.attentionMaps, zero ablation against the model with the
// head's W_O columns set to 0, the logit lens's last layer against model.logits, attribution parts
// summing to the logit, patching's tables, lab.randomRepeat, every result against the native
// CLI's JSON (attnlab heads / ablate / patch / lens, when build/attnlab is built), every bad call
// an Error naming it, and no call leaking WebAssembly memory; on an engine decoder and a GPT-2
// checkpoint (tests/reference/fixtures/gpt2/hf_f32).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { FIXTURE_DIR, FLAVOURS, ROOT, assertSameHeap, heapSnapshot, loadLab } from './harness.mjs';

const DECODER = { kind: 'decoder', vocabSize: 13, maxLen: 32, dModel: 16, numHeads: 2, numLayers: 2, positional: 'learned', seed: 3 };
const GPT2 = path.join(FIXTURE_DIR, 'gpt2/hf_f32');
const PATTERNS = ['previous_token', 'duplicate_token', 'induction', 'first_token', 'self'];

// The share of each query row i >= 1 on its pattern's keys, averaged over rows that have one.
function directScore(w, t, tok, pattern) {
  let sum = 0, rows = 0;
  for (let i = 1; i < t; ++i) {
    let on = 0, has = false, all = 0;
    for (let j = 0; j <= i; ++j) {
      all += w[i * t + j];
      const key = { previous_token: j === i - 1, duplicate_token: j < i && tok[j] === tok[i],
        induction: j >= 1 && tok[j - 1] === tok[i] && j - 1 < i, first_token: j === 0, self: j === i }[pattern];
      if (key) { has = true; on += w[i * t + j]; }
    }
    if (has) { sum += on / all; rows += 1; }
  }
  return rows ? sum / rows : null;
}

const CLI = path.join(ROOT, 'build', 'attnlab');
const NO_CLI = !fs.existsSync(CLI) && 'build/attnlab not built';

// The JSON of `attnlab <command> <args> --json FILE`.
function nativeJson(dir, command, args) {
  const out = path.join(dir, `${command}.json`);
  execFileSync(CLI, [command, ...args, '--json', out], { stdio: 'ignore' });
  return JSON.parse(fs.readFileSync(out, 'utf8'));
}

// WebAssembly and native kernels sum in different orders: equal to float rounding.
function assertClose(wasm, native, what, tol = 1e-4) {
  assert.ok(Math.abs(wasm - native) <= tol * Math.max(1, Math.abs(native)), `${what}: wasm ${wasm}, native ${native}`);
}

async function models(lab) {
  const gpt = await lab.loadPretrained({ weights: new Uint8Array(fs.readFileSync(path.join(GPT2, 'model.safetensors'))),
    config: fs.readFileSync(path.join(GPT2, 'config.json'), 'utf8') });
  return [new lab.Model(DECODER), gpt];
}

for (const flavour of FLAVOURS) {
  test(`${flavour}: headScores are the definitions on model.attentionMaps`, async () => {
    const lab = await loadLab(flavour);
    for (const model of await models(lab)) {
      const tok = lab.randomRepeat(6, 13, 2);
      assert.equal(tok.length, 12);
      assert.deepEqual([...tok.subarray(0, 6)], [...tok.subarray(6)]);
      const maps = model.attentionMaps(tok);  // (L, H, T, T)
      const [layers, heads, t] = maps.shape;
      const scores = model.headScores(tok);
      assert.equal(scores.length, layers * heads);
      for (const s of scores) {
        const w = maps.data.subarray((s.layer * heads + s.head) * t * t, (s.layer * heads + s.head + 1) * t * t);
        for (const p of PATTERNS) {
          const want = directScore(w, t, tok, p);
          assert.ok(Math.abs(s[p] - want) < 1e-5, `${s.layer}.${s.head} ${p}: ${s[p]} vs ${want}`);
        }
      }
      assert.equal(model.headScores([1, 2, 3])[0].duplicate_token, null);
      model.delete();
    }
  });

  test(`${flavour}: zero ablation is the model without the head's W_O columns`, async () => {
    const lab = await loadLab(flavour);
    const model = new lab.Model(DECODER);
    const tok = [4, 2, 9, 4, 2, 9, 1, 3];
    const a = model.ablate(tok, { heads: [[1, 0]] });
    const w = model.getParameter('blocks.1.attn.out_proj.weight');  // (C, C), head 0 = columns 0..7
    for (let o = 0; o < 16; ++o) for (let k = 0; k < 8; ++k) w.data[o * 16 + k] = 0;
    model.setParameter('blocks.1.attn.out_proj.weight', w);
    const logits = model.logits(tok);  // (T, V): one sequence
    const v = 13;
    let loss = 0;
    for (let i = 0; i + 1 < tok.length; ++i) {
      const row = logits.data.subarray(i * v, (i + 1) * v);
      const top = Math.max(...row);
      loss += top + Math.log(row.reduce((s, x) => s + Math.exp(x - top), 0)) - row[tok[i + 1]];
    }
    assert.ok(Math.abs(a.lossAblated - loss / (tok.length - 1)) < 1e-5, `${a.lossAblated} vs ${loss / (tok.length - 1)}`);
    assert.ok(a.klMean > 0 && a.klLast >= 0 && a.lossClean > 0);
    assert.deepEqual(a.probsAblated.shape, [13]);
    assert.ok(model.ablate(tok, { heads: [[0, 1]], method: 'mean' }).klMean > 0);
    model.delete();
  });

  test(`${flavour}: the logit lens, attribution and patching`, async () => {
    const lab = await loadLab(flavour);
    const [engine, gpt] = await models(lab);
    engine.delete();
    const tok = [8, 3, 8, 3, 6];
    const lens = gpt.logitLens(tok);
    const logits = gpt.logits(tok);
    const v = logits.shape[1];  // (T, V): one sequence
    assert.deepEqual(lens.shape, [3, v]);
    for (let i = 0; i < v; ++i) assert.ok(Math.abs(lens.data[2 * v + i] - logits.data[4 * v + i]) < 1e-4);
    // With probabilities: every row is the softmax of its logits, and the last is predict's next-token distribution.
    const probs = gpt.logitLens(tok, { probabilities: true });
    assert.deepEqual(probs.shape, lens.shape);
    for (let l = 0; l < 3; ++l) {
      const row = lens.data.subarray(l * v, (l + 1) * v);
      const top = Math.max(...row);
      const z = row.reduce((s, x) => s + Math.exp(x - top), 0);
      for (let i = 0; i < v; ++i) assert.ok(Math.abs(probs.data[l * v + i] - Math.exp(row[i] - top) / z) < 1e-6, `probabilities[${l}][${i}]`);
    }
    const next = gpt.predict(tok);
    assert.equal(next.data.length, v);
    for (let i = 0; i < v; ++i) assert.ok(Math.abs(probs.data[2 * v + i] - next.data[i]) < 1e-6, `probabilities[2][${i}] vs predict`);
    const a = gpt.logitAttribution(tok, { token: 7 });
    const sum = a.embed + a.lnBias + a.heads.data.reduce((s, x) => s + x, 0) + a.attnBias.reduce((s, x) => s + x, 0)
      + a.mlp.reduce((s, x) => s + x, 0);
    assert.ok(Math.abs(sum - a.logit) < 1e-3 * Math.max(1, Math.abs(a.logit)), `${sum} vs ${a.logit}`);
    assert.ok(Math.abs(a.logit - logits.data[4 * v + 7]) < 1e-4);
    const p = gpt.patch([11, 40, 12, 41, 11], [11, 40, 13, 41, 11], { answer: 40, wrong: 41 });
    assert.deepEqual(p.heads.shape, [2, 2]);
    assert.deepEqual(p.residual.shape, [2, 5]);
    assert.ok(Math.abs(p.residual.data[2] - 1) < 1e-4 && p.residual.data[0] === 0);
    gpt.delete();
  });

  test(`${flavour}: every result equals the native CLI's on the same model and tokens`, { skip: NO_CLI }, async () => {
    const lab = await loadLab(flavour);
    const dir = fs.mkdtempSync(path.join(ROOT, 'build', 'wasm-test-'));
    const [engine, gpt] = await models(lab);
    fs.writeFileSync(path.join(dir, 'engine.safetensors'), engine.save());
    const subjects = [
      ['engine decoder', engine, ['--model', path.join(dir, 'engine.safetensors')]],
      ['GPT-2', gpt, ['--model', path.join(GPT2, 'model.safetensors'), '--config', path.join(GPT2, 'config.json')]],
    ];
    for (const [name, model, flags] of subjects) {
      const v = model.config().vocabSize;
      const heads = nativeJson(dir, 'heads', [...flags, '--random-repeat', '6', '--seed', '2']).heads;
      const scores = model.headScores(lab.randomRepeat(6, v, 2));
      assert.equal(scores.length, heads.length, `${name}: heads`);
      scores.forEach((s, i) => {
        assert.deepEqual([s.layer, s.head], [heads[i].layer, heads[i].head]);
        for (const p of PATTERNS) {
          if (heads[i][p] === null) assert.equal(s[p], null, `${name} ${s.layer}.${s.head} ${p}`);
          else assertClose(s[p], heads[i][p], `${name} ${s.layer}.${s.head} ${p}`);
        }
      });

      const tok = [4, 2, 9, 4, 2, 9, 1, 3];
      const abl = nativeJson(dir, 'ablate', [...flags, '--tokens', tok.join(','), '--heads', '1.0,0.1', '--method', 'mean', '--top', String(v)]);
      const a = model.ablate(tok, { heads: [[1, 0], [0, 1]], method: 'mean' });
      for (const [js, cli] of [['lossClean', 'loss_clean'], ['lossAblated', 'loss_ablated'], ['klLast', 'kl_last'], ['klMean', 'kl_mean']]) {
        assertClose(a[js], abl[cli], `${name} ablate ${js}`);
      }
      for (const [js, cli] of [['probsClean', 'top_clean'], ['probsAblated', 'top_ablated']]) {
        assert.equal(abl[cli].length, v);
        for (const { id, p } of abl[cli]) assertClose(a[js].data[id], p, `${name} ablate ${js}[${id}]`);
      }

      const [clean, corrupted] = [[5, 1, 7, 2, 5], [5, 1, 3, 2, 5]];
      const pat = nativeJson(dir, 'patch', [...flags, '--clean-tokens', clean.join(','), '--corrupted-tokens', corrupted.join(','),
        '--answer', '7', '--wrong', '3']);
      const p = model.patch(clean, corrupted, { answer: 7, wrong: 3 });
      assertClose(p.cleanDiff, pat.clean_logit_diff, `${name} patch cleanDiff`);
      assertClose(p.corruptedDiff, pat.corrupted_logit_diff, `${name} patch corruptedDiff`);
      for (const key of ['heads', 'residual']) {
        assert.deepEqual(p[key].shape, [pat[key].length, pat[key][0].length], `${name} patch ${key} shape`);
        pat[key].flat().forEach((x, i) => assertClose(p[key].data[i], x, `${name} patch ${key}[${i}]`, 1e-3));
      }

      const lensCli = nativeJson(dir, 'lens', [...flags, '--tokens', tok.join(','), '--position', '3', '--top', String(v), '--token', '7']);
      const lens = model.logitLens(tok, { position: 3 });
      assert.equal(lensCli.position, 3);
      assert.deepEqual(lens.shape, [lensCli.layers.length, v]);
      for (const { layer, top } of lensCli.layers) {
        assert.equal(top.length, v);
        for (const { id, logit } of top) assertClose(lens.data[layer * v + id], logit, `${name} lens ${layer}[${id}]`);
      }
      const att = model.logitAttribution(tok, { token: 7, position: 3 });
      const want = lensCli.attribution;
      for (const [js, cli] of [['logit', 'logit'], ['embed', 'embed'], ['lnBias', 'ln_bias']]) assertClose(att[js], want[cli], `${name} ${js}`);
      want.attn_bias.forEach((x, l) => assertClose(att.attnBias[l], x, `${name} attnBias[${l}]`));
      want.mlp.forEach((x, l) => assertClose(att.mlp[l], x, `${name} mlp[${l}]`));
      assert.equal(att.heads.data.length, want.heads.length);
      for (const { layer, head, logit } of want.heads) assertClose(att.heads.data[layer * att.heads.shape[1] + head], logit, `${name} head ${layer}.${head}`);
    }
    engine.delete();
    gpt.delete();
    fs.rmSync(dir, { recursive: true });
  });

  test(`${flavour}: bad calls are Errors that name the problem and leak nothing`, async () => {
    const lab = await loadLab(flavour);
    const model = new lab.Model(DECODER);
    model.headScores([1, 2, 1]);
    assert.throws(() => model.ablate([1, 2, 3], { heads: [[2, 0]] }), /layer 2 out of range: layers are 0\.\.1/);
    const before = await heapSnapshot(lab);
    assert.throws(() => model.ablate([1, 2, 3], { heads: [[0, 2]] }), /head 2 out of range: heads are 0\.\.1/);
    assert.throws(() => model.ablate([1, 2, 3], { heads: [[0, 0]], method: 'half' }), /unknown ablation method 'half'; valid: zero, mean/);
    assert.throws(() => model.ablate([1, 2, 3], { heads: 5 }), /options\.heads must be an array of \[layer, head\] pairs, got number/);
    assert.throws(() => model.ablate([1, 2, 3], { heads: [[0, 1], [0, 1, 2]] }), /options\.heads\[1\] must be a \[layer, head\] pair, got a 3-element array/);
    assert.throws(() => model.ablate([1, 2, 3], { heads: [[0.5, 1]] }), /options\.heads\[0\]\[0\] \(the layer\) must be a non-negative integer, got 0\.5/);
    assert.throws(() => model.ablate([1, 2, 3], { heads: [[0, 0], [0, 0]] }), /head 0\.0 is named twice/);
    assert.throws(() => model.ablate([1, 2, 3], { heads: [] }), /name at least one head/);
    assert.throws(() => model.ablate([1, 2, 3], {}), /options\.heads \(\[\[layer, head\], \.\.\.\]\) is required/);
    assert.throws(() => model.ablate([1, 2, 3]), /Model\.ablate: options\.heads \(\[\[layer, head\], \.\.\.\]\) is required/);
    assert.throws(() => model.patch([1, 2, 3], [1, 2, 4]), /Model\.patch: options\.answer \(a token id\) is required/);
    assert.throws(() => model.logitAttribution([1, 2]), /Model\.logitAttribution: options\.token \(a token id\) is required/);
    assert.throws(() => model.ablate([1], { heads: [[0, 0]] }), /needs at least 2 tokens .*got 1/);
    assert.throws(() => model.ablate([1, 2], { head: [[0, 0]] }), /unknown option 'head' \(valid: heads, method\)/);
    assert.throws(() => model.patch([1, 2, 3], [1, 2, 4], { answer: 13, wrong: 1 }), /options\.answer 13 is outside the vocabulary 0\.\.12/);
    assert.throws(() => model.patch([1, 2, 3], [1, 2, 4], { answer: 2 ** 31, wrong: 1 }), /options\.answer 2147483648 is outside the vocabulary 0\.\.12/);
    assert.throws(() => model.patch([1, 2, 3], [1, 2, 4], { answer: 1, wrong: -1 }), /option 'wrong' must be a non-negative integer, got -1/);
    assert.throws(() => model.patch([1, 2, 3], [1, 2, 4], { answer: 1, wrong: 1 }), /the answer and the wrong token are both 1/);
    assert.throws(() => model.logitAttribution([1, 2], {}), /options\.token \(a token id\) is required/);
    assert.throws(() => model.logitAttribution([1, 2], { token: 1, position: 5 }), /position 5 out of range for 2 tokens/);
    assert.throws(() => model.headScores({ shape: [2, 2], data: [1, 2, 3, 4] }), /tokens must be one sequence, got a batch of 2/);
    assert.throws(() => model.headScores(new Array(33).fill(1)), /33 tokens are more than the model's 32 positions/);
    assert.throws(() => lab.randomRepeat(2 ** 32 - 1, 13, 1), /n 4294967295 \(2n = 8589934590 ids\) is over the budget of \d+ elements/);
    assert.throws(() => lab.randomRepeat(3, 0, 1), /vocabulary of 0 ids/);
    assert.throws(() => lab.randomRepeat(3, 13, -1), /seed must be a non-negative integer, got -1/);
    assertSameHeap(assert, before, await heapSnapshot(lab), 'after the refused calls');
    const calls = () => {
      const tok = lab.randomRepeat(4, 13, 1);
      model.headScores(tok);
      model.ablate(tok, { heads: [[1, 0]], method: 'mean' });
      model.patch([5, 1, 7, 2, 5], [5, 1, 3, 2, 5], { answer: 7, wrong: 3 });
      model.logitLens(tok, { position: 2 });
      model.logitAttribution(tok, { token: 7 });
    };
    calls();
    const warm = await heapSnapshot(lab);
    for (let i = 0; i < 50; i++) calls();
    assertSameHeap(assert, warm, await heapSnapshot(lab), 'after 50 rounds of every tool');
    const post = new lab.Model({ ...DECODER, norm: 'post' });
    assert.throws(() => post.logitAttribution([1, 2], { token: 1 }), /needs a pre-LN model/);
    post.delete();
    assert.throws(() => model.patch([1, 2, 3], [1, 2], { answer: 1, wrong: 2 }), /the clean prompt has 3 tokens and the corrupted one 2/);
    assert.throws(() => model.patch([1, 2], [1, 3], { answer: 1 }), /options\.wrong \(a token id\) is required/);
    assert.throws(() => model.logitLens([1, 2], { position: 2 }), /position 2 out of range for 2 tokens/);
    assert.throws(() => model.headScores([1, 13]), /has id 13, outside the vocabulary/);
    assert.throws(() => lab.randomRepeat(0, 13, 1), /n must be at least 1/);
    const encoder = new lab.Model({ kind: 'encoder', vocabSize: 5, numClasses: 2, dModel: 8, numHeads: 2, numLayers: 1 });
    assert.throws(() => encoder.headScores([1, 2]), /read a Transformer decoder's heads; this model's kind is 'encoder'/);
    encoder.delete();
    assert.equal(model.headScores([1, 2, 1]).length, 4);  // still working
    model.delete();
  });
}
