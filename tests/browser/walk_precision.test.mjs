// Variants and precision on screen: with fp16 and large inputs the scores overflow, and the cells
// marked as overflowed (data-nonfinite) are exactly the ±∞ / NaN cells of a separate engine's fp16
// trace, in every stage shown; the numerics line reports the engine's counts; the softmax step shows
// the same scores under softmax, sigmoid and ReLU, each equal to the engine's trace with it.
//   node --test tests/browser/walk_precision.test.mjs
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compareMatrix, readMatrix, screenshot, settle, useWalkthroughPage, loadReferenceEngine } from './support.mjs';

const ctx = useWalkthroughPage({ isolation: true });

async function reference(page, patch = {}) {
  await loadReferenceEngine(page);
  return page.evaluate(async (patch) => {
    const req = window.__attnlab.walk().trace.request;
    const lab = window.__refLab;
    const mha = new lab.MultiHeadAttention({ dModel: req.dModel, numHeads: req.numHeads, numKvHeads: req.numKvHeads, bias: true, seed: req.seed });
    const [T] = req.x.shape;
    const tr = mha.trace(req.x, {
      causal: req.causal,
      keyPaddingMask: req.keyPaddingMask ? { shape: [T], data: req.keyPaddingMask } : null,
      scale: req.scale,
      positional: req.positional,
      normalizer: req.normalizer,
      precision: req.precision,
      ...patch,
    });
    // Non-finite values cross as strings (and back below), whatever the serialiser does with them.
    const enc = (v) => (Number.isNaN(v) ? 'nan' : v === Infinity ? 'inf' : v === -Infinity ? '-inf' : v);
    const out = window.__dumpTrace(tr);
    for (const heads of Object.values(out)) for (const t of heads) t.data = t.data.map(enc);
    const numerics = tr.numerics();
    tr.delete();
    mha.delete();
    return { out, numerics };
  }, patch).then((r) => {
    for (const heads of Object.values(r.out)) for (const t of heads) t.data = t.data.map((v) => (v === 'nan' ? NaN : v === 'inf' ? Infinity : v === '-inf' ? -Infinity : v));
    return r;
  });
}

async function marks(page, name) {
  return page.$$eval(`figure[data-matrix="${name}"] g.cell`, (cells) => cells.map((c) => ({ i: Number(c.dataset.i), j: Number(c.dataset.j), mark: c.getAttribute('data-nonfinite'), cls: c.classList.contains('nonfinite'), masked: c.dataset.masked === '1' })));
}

test('fp16 with large inputs: overflow marks sit exactly on the engine’s ±∞ and NaN cells in every stage', async () => {
  const { page } = ctx;
  await page.selectOption('select[name="precision"]', 'fp16');
  await page.selectOption('select[name="inputScale"]', '1000');
  await page.waitForFunction(() => {
    const s = window.__attnlab.walk();
    return s.status === 'ready' && s.trace.request.precision === 'fp16' && s.traced.inputScale === 1000;
  });
  const { out: ref, numerics } = await reference(page);
  const overflowed = ref.scores.flatMap((t) => t.data).filter((v) => !Number.isFinite(v)).length;
  assert.ok(overflowed > 0, 'the fp16 scores overflow at ×1000');
  const shown = [[3, 'scores', 'scores'], [4, 'scaled', 'scaled'], [5, 'masked', 'masked'], [6, 'weights', 'weights'], [7, 'context', 'context'], [9, 'concat', 'concat'], [10, 'output', 'output']];
  let marked = 0;
  for (const [step, name, stage] of shown) {
    await page.locator(`nav.steps button[data-step="${step}"]`).click();
    await settle(page);
    const t = ref[stage][0];
    const K = t.shape[1];
    const cells = await marks(page, name);
    assert.equal(cells.length, t.data.length, `${name}: cell count`);
    for (const c of cells) {
      const v = t.data[c.i * K + c.j];
      const want = Number.isNaN(v) ? 'nan' : v === Infinity ? '+inf' : v === -Infinity && !c.masked ? '-inf' : null;
      assert.equal(c.mark, want, `${name}[${c.i}][${c.j}]: engine ${v}, page mark ${c.mark}`);
      assert.equal(c.cls, want !== null);
      if (want) marked++;
    }
    if (step === 3) await screenshot(page, 'walk-fp16-overflow-scores');
    if (step === 6) await screenshot(page, 'walk-fp16-overflow-softmax');
  }
  assert.ok(marked > 0);
  const strip = await page.locator('.numerics-strip').textContent();
  const posInf = Object.values(numerics).reduce((a, x) => a + x.posInf, 0);
  const nan = Object.values(numerics).reduce((a, x) => a + x.nan, 0);
  assert.match(strip, /fp16: largest \|scaled score\| .* of the format’s 65504/);
  assert.ok(strip.includes(`+∞ ${posInf}`) && strip.includes(`NaN ${nan}`), `numerics line '${strip}' has the engine's counts +∞ ${posInf}, NaN ${nan}`);
});

test('fp32 at ×1: no cell is marked; the softmax step shows softmax, sigmoid and ReLU weights equal to the engine’s', async () => {
  const { page } = ctx;
  await page.selectOption('select[name="precision"]', 'fp32');
  await page.selectOption('select[name="inputScale"]', '1');
  await page.waitForFunction(() => {
    const s = window.__attnlab.walk();
    return s.status === 'ready' && s.trace.request.precision === 'fp32' && (s.traced.inputScale ?? 1) === 1;
  });
  await page.locator('nav.steps button[data-step="6"]').click();
  await settle(page);
  assert.equal(await page.locator('g.cell.nonfinite').count(), 0);
  assert.equal(await page.locator('.numerics-strip').isHidden(), true);
  for (const n of ['softmax', 'sigmoid', 'relu']) {
    const { out } = await reference(page, { normalizer: n, stages: ['weights'] });
    compareMatrix(assert, await readMatrix(page, `norm-${n}`), out.weights[0], `normaliser ${n}`);
  }
  await screenshot(page, 'walk-normalizers');
});

test('linear attention’s φ(q), φ(k) and implied weights, and the block-sparse layout over the scores, are the engine’s', async () => {
  const { page } = ctx;
  await page.fill('input[name="sentence"]', 'the cat sat on the mat');
  await page.waitForFunction(() => window.__attnlab.walk().status === 'ready' && window.__attnlab.walk().input.tokens.length === 6);
  await page.locator('nav.steps button[data-step="6"]').click();
  await settle(page);
  const { out: lin } = await reference(page, { variant: 'linear', stages: ['phi_q', 'phi_k', 'weights'] });
  compareMatrix(assert, await readMatrix(page, 'linear-phi-q'), lin.phi_q[0], 'φ(q)');
  compareMatrix(assert, await readMatrix(page, 'linear-phi-k'), lin.phi_k[0], 'φ(k)');
  compareMatrix(assert, await readMatrix(page, 'linear-weights'), lin.weights[0], 'linear weights');
  const { out: sp } = await reference(page, { variant: 'block_sparse', blockSize: 2, windowBlocks: 0, globalBlocks: 1, randomBlocks: 0, stages: ['masked', 'weights'] });
  const layout = await page.evaluate(() => {
    const s = window.__attnlab.walk().trace.request;
    return Array.from(window.__refLab.sparseLayout(s.x.shape[0], s.x.shape[0], { blockSize: 2, windowBlocks: 0, globalBlocks: 1, randomBlocks: 0, causal: s.causal }).data);
  });
  const cells = await readMatrix(page, 'sparse-masked');
  const S = sp.masked[0].shape[1];
  const blocks = Math.ceil(S / 2);
  let hidden = 0;
  for (const c of cells) {
    const live = layout[Math.floor(c.i / 2) * blocks + Math.floor(c.j / 2)] === 1;
    assert.equal(c.masked, !live, `cell [${c.i}][${c.j}] hatched exactly outside the live blocks`);
    assert.equal(Number.isFinite(c.value) ? Math.fround(c.value) : c.value, sp.masked[0].data[c.i * S + c.j]);
    if (!live) hidden++;
  }
  assert.ok(hidden > 0, 'the layout hides some blocks');
  compareMatrix(assert, await readMatrix(page, 'sparse-weights'), sp.weights[0], 'block-sparse weights');
  await page.locator('figure[data-matrix="linear-phi-q"]').scrollIntoViewIfNeeded();
  await screenshot(page, 'walk-variants');
});
