// The interpretability tools in JavaScript (web/bindings/interp.cpp): head scores against the
// definitions computed here from model.attentionMaps, zero ablation against the model with the
// head's W_O columns set to 0, the logit lens's last layer against model.logits, attribution parts
// summing to the logit, patching's tables, lab.randomRepeat, and every bad call an Error naming it;
// on an engine decoder and a GPT-2 checkpoint (tests/reference/fixtures/gpt2/hf_f32).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import { FIXTURE_DIR, FLAVOURS, loadLab } from './harness.mjs';

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

  test(`${flavour}: bad calls are Errors that name the problem`, async () => {
    const lab = await loadLab(flavour);
    const model = new lab.Model(DECODER);
    assert.throws(() => model.ablate([1, 2, 3], { heads: [[2, 0]] }), /layer 2 out of range: layers are 0\.\.1/);
    assert.throws(() => model.ablate([1, 2, 3], { heads: [[0, 2]] }), /head 2 out of range: heads are 0\.\.1/);
    assert.throws(() => model.ablate([1, 2, 3], { heads: [[0, 0]], method: 'half' }), /unknown ablation method 'half'; valid: zero, mean/);
    assert.throws(() => model.patch([1, 2, 3], [1, 2], { answer: 1, wrong: 2 }), /the clean prompt has 3 tokens and the corrupted one 2/);
    assert.throws(() => model.patch([1, 2], [1, 3], { answer: 1 }), /options\.wrong \(a token id\) is required/);
    assert.throws(() => model.logitLens([1, 2], { position: 2 }), /position 2 out of range for 2 tokens/);
    assert.throws(() => model.headScores([1, 13]), /has id 13, outside the vocabulary/);
    assert.throws(() => lab.randomRepeat(0, 13, 1), /n must be at least 1/);
    const encoder = new lab.Model({ kind: 'encoder', vocabSize: 5, numClasses: 2, dModel: 8, numHeads: 2, numLayers: 1 });
    assert.throws(() => encoder.headScores([1, 2]), /read a Transformer decoder's heads/);
    encoder.delete();
    assert.equal(model.headScores([1, 2, 1]).length, 4);  // still working
    model.delete();
  });
}
