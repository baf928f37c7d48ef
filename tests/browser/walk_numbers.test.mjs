// The numbers the walkthrough forms in TypeScript from the engine's stages, checked against a
// separate engine's trace of the same layer: the softmax step's row sums (Σ of each weights row)
// and the per-term products a hover lists for a projected q (x[i][c]·W_Q[j][c]), a score
// (q_i[d]·k_j[d]) and an output cell (concat[i][c]·W_O[j][c]), plus the bias when not 0, which
// add up to the engine's value; and the scaling step's histograms, whose bins count the engine's
// unscaled and scaled scores.
//   node --test tests/browser/walk_numbers.test.mjs
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cellText, engineReference, settle, useWalkthroughPage } from './support.mjs';

const ctx = useWalkthroughPage({ isolation: false });

/** The numbers of a tooltip's "… = a + b + …" line (true minus signs read as '-'). */
function tooltipTerms(text) {
  const line = text.split('=')[1].split(/sum|Σ/)[0];
  // each term, or 'bias <value>' last
  return line.split(' + ').map((s) => Number(s.trim().replace('−', '-').replace(/^[^\d-]+/, '')));
}

async function hoverTerms(page, matrix, i, j) {
  await page.locator(`figure[data-matrix="${matrix}"] g.cell[data-i="${i}"][data-j="${j}"]`).hover();
  const tip = page.locator('.tooltip .terms');
  await tip.waitFor({ state: 'visible' });
  const text = await tip.textContent();
  await page.mouse.move(0, 0);
  return tooltipTerms(text);
}

test('the softmax step’s row sums are the sums of the engine’s weights', async () => {
  const { page } = ctx;
  await page.selectOption('select[name="mask"]', 'causal');
  await page.waitForFunction(() => { const s = window.__attnlab.walk(); return s.status === 'ready' && s.trace.request.causal; });
  const ref = await engineReference(page);
  await page.locator('nav.steps button[data-step="6"]').click();
  await settle(page);
  const labels = await page.$$eval('figure[data-matrix="weights"] text.right', (ts) => ts.map((t) => t.textContent));
  const w = ref.weights[0];
  const [T, S] = w.shape;
  assert.equal(labels.length, T);
  for (let i = 0; i < T; i++) {
    let sum = 0;
    for (let j = 0; j < S; j++) sum += w.data[i * S + j];
    assert.equal(labels[i], `Σ ${cellText(sum, 3)}`, `row ${i}`);
  }
});

test('a score’s hover lists the products q_i[d]·k_j[d] of the engine’s q and k, summing to its score', async () => {
  const { page } = ctx;
  const ref = await engineReference(page);
  await page.locator('nav.steps button[data-step="3"]').click();
  await settle(page);
  const q = ref.q[0], k = ref.k[0], sc = ref.scores[0];
  const [T, D] = q.shape;
  const S = k.shape[0];
  for (const [i, j] of [[0, 0], [T - 1, 0], [1, S - 1]]) {
    const terms = await hoverTerms(page, 'scores', i, j);
    assert.equal(terms.length, D);
    terms.forEach((t, d) => assert.equal(Math.fround(t), Math.fround(q.data[i * D + d] * k.data[j * D + d]), `score [${i}][${j}] term ${d}`));
    const sum = terms.reduce((a, b) => a + b, 0);
    assert.ok(Math.abs(sum - sc.data[i * S + j]) <= 1e-5 * (1 + Math.abs(sum)), `score [${i}][${j}]: terms sum ${sum}, engine ${sc.data[i * S + j]}`);
  }
});

test('an output cell’s hover lists concat[i][c]·W_O[j][c] and the bias, summing to the engine’s output', async () => {
  const { page } = ctx;
  const ref = await engineReference(page);
  const wo = await page.evaluate(() => { const p = window.__attnlab.walk().trace.parameters; return { w: { shape: p['out_proj.weight'].shape, data: Array.from(p['out_proj.weight'].data) }, b: Array.from(p['out_proj.bias'].data) }; });
  await page.locator('nav.steps button[data-step="10"]').click();
  await settle(page);
  const concat = ref.concat[0], out = ref.output[0];
  const [T, C] = concat.shape;
  for (const [i, j] of [[0, 0], [T - 1, C - 1]]) {
    const terms = await hoverTerms(page, 'output', i, j);
    // the bias is listed when it is not 0 (the layer's initial biases are 0)
    assert.equal(terms.length, wo.b[j] === 0 ? C : C + 1, 'C products and the bias');
    for (let c = 0; c < C; c++) assert.equal(Math.fround(terms[c]), Math.fround(concat.data[i * C + c] * wo.w.data[j * C + c]), `output [${i}][${j}] term ${c}`);
    if (wo.b[j] !== 0) assert.equal(Math.fround(terms[C]), Math.fround(wo.b[j]), 'the bias');
    const sum = terms.reduce((a, b) => a + b, 0);
    assert.ok(Math.abs(sum - out.data[i * C + j]) <= 1e-5 * (1 + Math.abs(sum)), `output [${i}][${j}]: ${sum} vs engine ${out.data[i * C + j]}`);
  }
});

test('the scaling step’s histograms count the engine’s unscaled and scaled scores, bin by bin', async () => {
  const { page } = ctx;
  await page.selectOption('select[name="mask"]', 'none');
  await page.waitForFunction(() => { const s = window.__attnlab.walk(); return s.status === 'ready' && !s.trace.request.causal; });
  const scaled = await engineReference(page);
  const unscaled = await engineReference(page, { scale: false });
  await page.locator('nav.steps button[data-step="4"]').click();
  await settle(page);
  const series = await page.$$eval('figure[data-hist="scores"] g.series', (gs) => gs.map((g) => Array.from(g.querySelectorAll('rect'), (r) => r.__data__)));
  assert.equal(series.length, 2);
  const values = (ref) => ref.scaled.flatMap((t) => t.data).filter(Number.isFinite);
  for (const [k, ref, what] of [[0, unscaled, 'unscaled'], [1, scaled, 'scaled']]) {
    const v = values(ref);
    const bins = series[k];
    assert.equal(bins.reduce((a, b) => a + b.count, 0), v.length, `${what}: every score of every head counted once`);
    bins.forEach((b, n) => {
      const last = n === bins.length - 1;
      const want = v.filter((x) => x >= b.x0 && (x < b.x1 || (last && x <= b.x1))).length;
      assert.equal(b.count, want, `${what} bin [${b.x0}, ${b.x1})`);
    });
  }
});

test('a projected cell’s hover lists x[i][c]·W_Q[j][c] of the engine’s x and W_Q, summing to its q', async () => {
  const { page } = ctx;
  const ref = await engineReference(page);
  const wq = await page.evaluate(() => { const p = window.__attnlab.walk().trace.parameters; return { shape: p['q_proj.weight'].shape, data: Array.from(p['q_proj.weight'].data), bias: Array.from(p['q_proj.bias'].data) }; });
  await page.locator('nav.steps button[data-step="2"]').click();
  await settle(page);
  const x = ref.x[0], q = ref.q[0];
  const [T, C] = x.shape;
  const D = q.shape[1];
  for (const [i, j] of [[0, 0], [T - 1, D - 1]]) {
    const terms = await hoverTerms(page, 'q-h', i, j);
    assert.equal(terms.length, wq.bias[j] === 0 ? C : C + 1);
    for (let c = 0; c < C; c++) assert.equal(Math.fround(terms[c]), Math.fround(x.data[i * C + c] * wq.data[j * C + c]), `q [${i}][${j}] term ${c}`);
    const sum = terms.reduce((a, b) => a + b, 0);
    assert.ok(Math.abs(sum - q.data[i * D + j]) <= 1e-5 * (1 + Math.abs(sum)), `q [${i}][${j}]: ${sum} vs engine ${q.data[i * D + j]}`);
  }
});
