// A poem's patterns in JavaScript (web/bindings/poem.cpp): lab.poemForm and lab.poemPatterns on the
// hand-made poem of tests/interp/test_poem_patterns.cpp give the keys the native test knows;
// lab.poemScores equals the detector score computed here from the maps; every bad call is an Error
// naming the values.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { FLAVOURS, loadLab } from './harness.mjs';

//  0 ''   1 白 2 日 3 依 4 ，   5 黄 6 河 7 入 8 。   9 '\n'
// 10 欲  11 穷 12 千 13 ，  14 更 15 上 16 一 17 。  18 ''
const POEM = ['', '白', '日', '依', '，', '黄', '河', '入', '。', '\n', '欲', '穷', '千', '，', '更', '上', '一', '。', ''];
// The native test's keys (query, key) of every pattern.
const KEYS = {
  paired_line: [[5, 1], [6, 2], [7, 3], [8, 4], [14, 10], [15, 11], [16, 12], [17, 13]],
  paired_next: [[5, 2], [6, 3], [7, 4], [14, 11], [15, 12], [16, 13]],
  rhyme: [[16, 7]],
  rhyme_next: [[15, 7]],
};

const ones = (m) => {
  const T = m.shape[0];
  const out = [];
  for (let i = 0; i < T; i++) for (let j = 0; j < T; j++) if (m.data[i * T + j] === 1) out.push([i, j]);
  assert.ok(m.data.every((v) => v === 0 || v === 1), 'a 0/1 mask');
  return out;
};

// (L, H, T, T): head (l, h) row i puts (l·H + h + 1) parts on key i - 1 and 1 part on every other key j <= i.
function maps(L, H, T) {
  const data = new Float32Array(L * H * T * T);
  for (let l = 0; l < L; l++) for (let h = 0; h < H; h++) for (let i = 0; i < T; i++) {
    const base = ((l * H + h) * T + i) * T;
    for (let j = 0; j <= i; j++) data[base + j] = j === i - 1 ? l * H + h + 1 : 1;
  }
  return { shape: [L, H, T, T], data };
}

function directScore(w, T, keys) {
  let sum = 0, rows = 0;
  for (let i = 1; i < T; i++) {
    const ks = keys.filter(([q]) => q === i).map(([, k]) => k);
    if (!ks.length) continue;
    let all = 0;
    for (let j = 0; j < T; j++) all += w[i * T + j];
    sum += ks.reduce((s, j) => s + w[i * T + j], 0) / all;
    rows++;
  }
  return rows ? sum / rows : null;
}

for (const flavour of FLAVOURS) {
  test(`${flavour}: the hand-made poem's form and keys are the native test's`, async () => {
    const lab = await loadLab(flavour);
    const form = lab.poemForm(POEM);
    assert.equal(form.length, POEM.length);
    assert.deepEqual(form[0], null);
    assert.deepEqual(form[9], null);
    assert.deepEqual(form[4], { line: 0, column: 3, mark: true });
    assert.deepEqual(form[14], { line: 3, column: 0, mark: false });
    const masks = lab.poemPatterns(POEM);
    assert.deepEqual(Object.keys(masks), Object.keys(KEYS));
    for (const [p, keys] of Object.entries(KEYS)) {
      assert.deepEqual(masks[p].shape, [POEM.length, POEM.length]);
      assert.deepEqual(ones(masks[p]), keys, p);
    }
    assert.deepEqual(ones(lab.poemPatterns(POEM.slice(0, 17)).rhyme), [], 'an unclosed line has no rhyme');
  });

  test(`${flavour}: poemScores is the detector score of every head against each pattern`, async () => {
    const lab = await loadLab(flavour);
    const T = POEM.length;
    const m = maps(2, 3, T);
    const rows = lab.poemScores(m, POEM);
    assert.equal(rows.length, 6);
    rows.forEach((r, k) => {
      assert.deepEqual([r.layer, r.head], [Math.floor(k / 3), k % 3]);
      const w = m.data.subarray(k * T * T, (k + 1) * T * T);
      for (const [p, keys] of Object.entries(KEYS)) {
        const want = directScore(w, T, keys);
        assert.ok(Math.abs(r[p] - want) < 1e-6, `${r.layer}.${r.head} ${p}: ${r[p]} vs ${want}`);
      }
    });
    const none = lab.poemScores(maps(1, 1, 3), ['', '山', '水']);
    assert.deepEqual(none, [{ layer: 0, head: 0, paired_line: null, paired_next: null, rhyme: null, rhyme_next: null }]);
  });

  test(`${flavour}: bad input is an Error naming the values`, async () => {
    const lab = await loadLab(flavour);
    assert.throws(() => lab.poemPatterns('白日'), /lab\.poemPatterns: texts/);
    assert.throws(() => lab.poemForm([1, 2]), /lab\.poemForm: texts/);
    assert.throws(() => lab.poemScores(maps(1, 1, 4), POEM), /lab\.poemScores: maps must have shape \(L, H, T, T\) with T = 19 \(the texts' length\), got \(1, 1, 4, 4\)|got \[1, 1, 4, 4\]/);
    assert.throws(() => lab.poemScores({ shape: [2, 2], data: new Float32Array(4) }, ['', '山']), /lab\.poemScores: maps must have shape/);
  });
}
