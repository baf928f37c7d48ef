// The chapters' figures on the shipped models (web/src/chapters/figures/context, every_head and
// poem_links .compute.ts) against the engine directly: Model.residuals (the residual stream the
// §1.3 figure compares) against the token embedding and the logit lens; each figure's numbers
// against the engine's own calls on models/tang and models/brown, and its poem patterns against a
// direct reading of the poem's characters; every bad input an Error that names it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import { FLAVOURS, ROOT, loadLab } from './harness.mjs';
import { importFigureModules } from './figure_modules.mjs';

const modelBytes = (name) => fs.readFileSync(path.join(ROOT, 'models', `${name}.safetensors`));
const [{ context }, { everyHead }, { poemLinks }, { holdShipped }] = await importFigureModules([
  'chapters/figures/context.compute.ts', 'chapters/figures/every_head.compute.ts', 'chapters/figures/poem_links.compute.ts', 'chapters/figures/shipped.compute.ts',
]);
const ref = (name) => ({ name, url: `models/${name}.safetensors` });

/** The ids the figures read: the model's begin token (if any), then its tokenizer's. */
function idsOf(model, text) {
  const tok = model.tokenizer();
  try {
    const begin = tok.beginId();
    return Int32Array.from([...(begin === null ? [] : [begin]), ...tok.encode(text)]);
  } finally {
    tok.delete();
  }
}

const row = (t, ...lead) => {
  const inner = t.shape.slice(lead.length).reduce((a, b) => a * b, 1);
  let at = 0;
  lead.forEach((i, k) => (at = at * t.shape[k] + i));
  return t.data.subarray(at * inner, (at + 1) * inner);
};

function cosDist(a, b) {
  let ab = 0, aa = 0, bb = 0;
  for (let c = 0; c < a.length; c++) { ab += a[c] * b[c]; aa += a[c] * a[c]; bb += b[c] * b[c]; }
  return 1 - ab / Math.sqrt(aa * bb);
}

const close = (a, b, tol, what) => assert.ok(Math.abs(a - b) <= tol, `${what}: ${a} vs ${b}`);

for (const flavour of FLAVOURS) {
  test(`${flavour}: Model.residuals is (L + 1, T, C): the token embedding first, and the logit lens reads each layer of it`, async () => {
    const lab = await loadLab(flavour);
    const model = lab.Model.load(modelBytes('tang'));
    try {
      const { numLayers: L, dModel: C, vocabSize: V } = model.config();
      const ids = idsOf(model, '白日依山尽，黄河入海流。');
      const T = ids.length;
      const res = model.residuals(ids);
      assert.deepEqual(res.shape, [L + 1, T, C]);
      // tang has rotary positions (nothing added to the embedding): residual[0] is the embedding row.
      const emb = model.getParameter('tok_emb.weight');
      for (let t = 0; t < T; t++) assert.deepEqual(Array.from(row(res, 0, t)), Array.from(row(emb, ids[t])), `residual[0][${t}]`);
      // The logit lens at the last position is ln_f(residual[l]) · W_Uᵀ (tied: the embedding).
      const lens = model.logitLens(ids);
      const g = model.getParameter('ln_f.weight').data, b = model.getParameter('ln_f.bias').data;
      const eps = model.config().layerNormEps;
      for (let l = 0; l <= L; l++) {
        const x = row(res, l, T - 1);
        const mean = x.reduce((s, v) => s + v, 0) / C;
        const vr = x.reduce((s, v) => s + (v - mean) ** 2, 0) / C;
        const n = Array.from(x, (v, c) => ((v - mean) / Math.sqrt(vr + eps)) * g[c] + b[c]);
        for (const v of [0, 7, 100, V - 1]) {
          const e = row(emb, v);
          let s = 0;
          for (let c = 0; c < C; c++) s += n[c] * e[c];
          close(s, row(lens, l)[v], 2e-3 * Math.max(1, Math.abs(s)), `lens[${l}][${v}]`);
        }
      }
      assert.throws(() => model.residuals(Int32Array.from([1, V])), (e) => e instanceof Error && /Model\.residuals/.test(e.message) && new RegExp(String(V)).test(e.message));
      assert.throws(() => model.residuals([]), (e) => e instanceof Error && /Model\.residuals/.test(e.message));
    } finally {
      model.delete();
    }
    const enc = new lab.Model({ kind: 'encoder', vocabSize: 10, numClasses: 2, maxLen: 8, dModel: 8, numHeads: 2, numLayers: 1 });
    assert.throws(() => enc.residuals([1, 2]), (e) => e instanceof Error && /Model\.residuals.*encoder/.test(e.message));
    enc.delete();
  });
}

const lab = await loadLab('single');
const tang = lab.Model.load(modelBytes('tang'));
const brown = lab.Model.load(modelBytes('brown'));
holdShipped('tang', tang);
holdShipped('brown', brown);

test('§1.3 context: the distances are the cosine distances of Model.residuals, 0 at the embedding; the attention row is the heads\' mean', () => {
  for (const [name, model, a, b, word] of [
    ['brown', brown, 'He sat on the river bank and watched the water.', 'She went to the bank to ask for a loan.', 'bank'],
    ['tang', tang, '两个黄鹂鸣翠柳，一行白鹭上青天。', '行到水穷处，坐看云起时。', '行'],
  ]) {
    for (const [layer, head] of [[0, -1], [3, 2]]) {
      const d = context(lab, { figure: 'context', shipped: ref(name), a, b, word, layer, head });
      const [A, B] = [a, b].map((s) => idsOf(model, s));
      // The last token covering the word's first occurrence (after the begin token, if any).
      const tok = model.tokenizer();
      const shift = tok.beginId() === null ? 0 : 1;
      const pos = [a, b].map((s) => {
        const at = s.indexOf(word);
        const spans = tok.tokens(s);
        return shift + spans.findLastIndex((t) => t.start < at + word.length && t.end > at);
      });
      tok.delete();
      assert.deepEqual(d.sentences.map((s) => s.position), pos, `${name}: the word's positions`);
      if (name === 'brown') assert.deepEqual(d.sentences[0].pieces.map((i) => d.sentences[0].labels[i]), ['␣b', 'ank'], 'brown spells " bank" with two tokens');
      assert.ok(pos.every((p) => p > 0));
      const [rA, rB] = [A, B].map((ids) => model.residuals(ids));
      assert.equal(d.distance.length, model.config().numLayers + 1);
      assert.equal(d.distance[0], 0, `${name}: the same token's embedding in both`);
      d.distance.forEach((v, l) => close(v, cosDist(row(rA, l, pos[0]), row(rB, l, pos[1])), 1e-6, `${name} distance[${l}]`));
      assert.ok(d.distance[d.distance.length - 1] > 0.01, `${name}: the contexts move the two vectors apart`);
      [A, B].forEach((ids, k) => {
        const maps = model.attentionMaps(ids);
        const H = maps.shape[1];
        const heads = head < 0 ? [...Array(H).keys()] : [head];
        const want = Array.from({ length: pos[k] + 1 }, (_, j) => heads.reduce((s, h) => s + row(maps, layer, h, pos[k])[j], 0) / heads.length);
        d.sentences[k].row.forEach((w, j) => close(w, want[j], 1e-6, `${name} row[${k}][${j}]`));
        assert.equal(d.sentences[k].top[0].weight, Math.max(...d.sentences[k].row));
      });
    }
  }
});

test('§1.3 context: a word missing, ending in different tokens or empty, a bad layer or head: Errors that say which', () => {
  const base = { figure: 'context', shipped: ref('brown'), a: 'He sat on the river bank.', b: 'She went to the bank.', word: 'bank', layer: 0, head: -1 };
  assert.throws(() => context(lab, { ...base, b: 'She went home.' }), /sentence B has no “bank”/);
  assert.throws(() => context(lab, { ...base, a: 'The riverbanks flooded.' }), /sentence A has no “bank”/, 'a word inside a longer one is not the word');
  assert.throws(() => context(lab, { ...base, word: 'fall', a: 'fall came early.', b: 'In the fall we left.' }), /“fall” ends in different tokens in the two sentences \(“all” in A, “␣fall” in B\)/);
  assert.throws(() => context(lab, { ...base, word: ' ' }), /the word to compare is empty/);
  assert.throws(() => context(lab, { ...base, layer: 4 }), /layer 4 is not a layer of brown \(0\.\.3\)/);
  assert.throws(() => context(lab, { ...base, head: 4 }), /head 4 is not a head of brown/);
  assert.throws(() => context(lab, { ...base, a: 'bank '.repeat(200) }), /sentence A is \d+ tokens long; the model reads at most 128/);
});

/** The poem patterns (include/attnlab/interp/poem_patterns.hpp, through lab.poemScores), written out again from their definitions. */
const POEM = ['paired_line', 'paired_next', 'rhyme', 'rhyme_next'];

/**
 * A poem's patterns read from its characters: token k + 1 is character k (tang: ⟨s⟩, then a token a
 * character). A line is its characters and its closing mark (，/。, its last column).
 */
function directPoemKeys(text) {
  const lines = [];
  let cur = [];
  [...text].forEach((ch, k) => {
    if (/\p{Script=Han}/u.test(ch)) cur.push(k + 1);
    else if (ch === '，' || ch === '。') { cur.push(k + 1); lines.push(cur); cur = []; }
  });
  const T = [...text].length + 1;
  const keys = Object.fromEntries(POEM.map((p) => [p, Array.from({ length: T }, () => [])]));
  lines.forEach((line, n) => {
    if (n % 2 === 0) return;
    line.forEach((q, c) => {
      if (lines[n - 1][c] !== undefined) keys.paired_line[q].push(lines[n - 1][c]);
      if (lines[n - 1][c + 1] !== undefined) keys.paired_next[q].push(lines[n - 1][c + 1]);
    });
    if (n >= 3) {
      keys.rhyme[line.at(-2)].push(lines[n - 2].at(-2));
      keys.rhyme_next[line.at(-3)].push(lines[n - 2].at(-2));
    }
  });
  return keys;
}

function directScore(w, T, keys) {
  let sum = 0, rows = 0;
  for (let i = 1; i < T; i++) {
    if (!keys[i].length) continue;
    sum += keys[i].reduce((s, j) => s + w[i * T + j], 0) / w.subarray(i * T, i * T + T).reduce((s, v) => s + v, 0);
    rows++;
  }
  return rows ? sum / rows : null;
}

const POEM_TEXT = '江上日多雨，萧萧荆楚秋。\n高风下木叶，永夜揽貂裘。\n勋业频看镜，行藏独倚楼。\n时危思报主，衰谢不能休。\n';

test('§3.2 every head: the maps and the five detector scores are the engine\'s; the poem scores are the direct definitions\'; the label is the best', () => {
  for (const [name, model, text] of [['tang', tang, '白日依山尽，黄河入海流。\n欲穷千里目，更上一层楼。\n'], ['brown', brown, 'Mr. Smith said that the new school would open in May, and Mr. Smith was right.']]) {
    const d = everyHead(lab, { figure: 'everyHead', shipped: ref(name), text });
    const ids = idsOf(model, text);
    const maps = model.attentionMaps(ids);
    assert.deepEqual(d.maps.shape, maps.shape);
    assert.deepEqual(Array.from(d.maps.data), Array.from(maps.data), `${name}: the maps`);
    const engine = model.headScores(ids);
    assert.equal(d.heads.length, engine.length);
    const poemKeys = name === 'tang' ? directPoemKeys(text) : null;
    const T = ids.length;
    d.heads.forEach((h, k) => {
      for (const p of ['previous_token', 'duplicate_token', 'induction', 'first_token', 'self']) assert.equal(h.scores[p], engine[k][p], `${name} ${h.layer}.${h.head} ${p}`);
      if (poemKeys) for (const p of POEM) {
        const want = directScore(row(maps, h.layer, h.head), T, poemKeys[p]);
        if (want === null) assert.equal(h.scores[p], null);
        else close(h.scores[p], want, 1e-6, `${h.layer}.${h.head} ${p}`);
      }
      const best = Object.entries(h.scores).filter(([, s]) => s !== null).sort((x, y) => y[1] - x[1])[0];
      assert.equal(h.best.score, best[1]);
    });
    assert.equal(d.patterns.includes('rhyme'), name === 'tang', `${name}: poem scores only on a poem`);
  }
  assert.throws(() => everyHead(lab, { figure: 'everyHead', shipped: ref('brown'), text: 'word '.repeat(60) }), /the text is \d+ tokens long; the grid of every head draws at most 40/);
  assert.throws(() => everyHead(lab, { figure: 'everyHead', shipped: ref('tang'), text: '' }), /the text has no tokens/);
});

test('§5.2 poem links: auto takes the best poem-pattern head; the links are every weight ≥ the threshold between two characters, longest first, each named by the poem\'s form', () => {
  const d = poemLinks(lab, { figure: 'poemLinks', shipped: ref('tang'), poem: POEM_TEXT, head: 'auto', threshold: 0.3 });
  const ids = idsOf(tang, POEM_TEXT);
  const T = ids.length;
  const maps = tang.attentionMaps(ids);
  const [L, H] = maps.shape;
  const keys = directPoemKeys(POEM_TEXT);
  let best = { score: -1 };
  for (let l = 0; l < L; l++) for (let h = 0; h < H; h++) for (const p of POEM) {
    const s = directScore(row(maps, l, h), T, keys[p]);
    if (s !== null && s > best.score + 1e-12) best = { l, h, p, score: s };
  }
  assert.deepEqual([d.layer, d.head, d.pattern], [best.l, best.h, best.p], 'the head auto chose');
  close(d.scores[best.p], best.score, 1e-6, 'its score');
  const w = row(maps, d.layer, d.head);
  assert.deepEqual(Array.from(d.weights.data), Array.from(w));
  const want = [];
  const isChar = (i) => i > 0 && /\p{Script=Han}/u.test([...POEM_TEXT][i - 1]);
  for (let i = 0; i < T; i++) for (let j = 1; j <= i - 2; j++) if (isChar(i) && isChar(j) && w[i * T + j] >= 0.3) want.push([i, j]);
  assert.deepEqual(d.links.map((k) => [k.query, k.key]).sort(), want.sort(), 'every strong link');
  for (let k = 1; k < d.links.length; k++) assert.ok(d.links[k - 1].distance >= d.links[k].distance, 'longest first');
  for (const k of d.links) {
    assert.equal(k.distance, k.query - k.key);
    const kind = POEM.find((p) => keys[p][k.query].includes(k.key)) ?? (ids[k.query] === ids[k.key] ? 'same_char' : 'other');
    assert.equal(k.kind, kind, `${k.query} -> ${k.key}`);
  }
  const chosen = poemLinks(lab, { figure: 'poemLinks', shipped: ref('tang'), poem: POEM_TEXT, head: '2.1', threshold: 0.2 });
  assert.deepEqual([chosen.layer, chosen.head, chosen.chosen], [2, 1, 'reader']);
  assert.throws(() => poemLinks(lab, { figure: 'poemLinks', shipped: ref('tang'), poem: POEM_TEXT, head: '4.0', threshold: 0.3 }), /head “4\.0” is not a head of tang/);
  assert.throws(() => poemLinks(lab, { figure: 'poemLinks', shipped: ref('tang'), poem: POEM_TEXT, head: 'auto', threshold: 0 }), /threshold 0 is not a weight in \(0, 1\]/);
  assert.throws(() => poemLinks(lab, { figure: 'poemLinks', shipped: ref('tang'), poem: '白日依山尽', head: 'auto', threshold: 0.3 }), /the poem has no couplet/);
});

test('a figure asking for a shipped model the worker has not opened is an Error naming the file', async () => {
  const [{ context: fresh }] = await importFigureModules(['chapters/figures/context.compute.ts'], 'fresh');
  assert.throws(() => fresh(lab, { figure: 'context', shipped: ref('brown'), a: 'a bank', b: 'a bank', word: 'bank', layer: 0, head: -1 }), /the shipped model brown\.safetensors is not open in the engine worker/);
});
