// Flushed cells on screen: with fp16 the cells marked as flushed to zero (data-flushed) in every
// stage the walkthrough shows are exactly the cells a separate engine's fp16 trace names
// (Trace.flushedCells), and none are marked in fp32.
//   node --test tests/browser/walk_flush.test.mjs
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadReferenceEngine, screenshot, settle, useWalkthroughPage } from './support.mjs';

const ctx = useWalkthroughPage({ isolation: false });

/** Head 0's flushed cells of each stage, from the reference engine with the page's settings. */
async function engineFlushed(page) {
  await loadReferenceEngine(page);
  return page.evaluate(() => {
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
    });
    const out = {};
    for (const name of tr.stageNames()) out[name] = Array.from(tr.flushedCells(name, ['x', 'concat', 'output'].includes(name) ? -1 : 0));
    const numerics = tr.numerics();
    tr.delete();
    mha.delete();
    return { out, numerics };
  });
}

async function flushedMarks(page, name) {
  return page.$$eval(`figure[data-matrix="${name}"] g.cell`, (cells) => {
    const cols = Number(cells[0].closest('svg').getAttribute('data-cols'));
    return { count: cells.length, marked: cells.filter((c) => c.dataset.flushed === '1' && c.classList.contains('flushed')).map((c) => Number(c.dataset.i) * cols + Number(c.dataset.j)).sort((a, b) => a - b) };
  });
}

// step, figure name, engine stage (head 0 / whole width)
const SHOWN = [[2, 'q-h', 'q'], [3, 'scores', 'scores'], [4, 'scaled', 'scaled'], [5, 'masked', 'masked'], [6, 'weights', 'weights'], [7, 'context', 'context'], [9, 'concat', 'concat'], [10, 'output', 'output']];

async function setPrecision(page, precision, scale) {
  await page.selectOption('select[name="precision"]', precision);
  await page.selectOption('select[name="inputScale"]', String(scale));
  await page.waitForFunction(([p, x]) => {
    const s = window.__attnlab.walk();
    return s.status === 'ready' && s.trace.request.precision === p && (s.traced.inputScale ?? 1) === x;
  }, [precision, scale]);
}

test('fp16 at ×10: flushed marks sit exactly on the engine’s flushed cells in every stage shown', async () => {
  const { page } = ctx;
  await setPrecision(page, 'fp16', 10);
  const { out, numerics } = await engineFlushed(page);
  const total = Object.values(numerics).reduce((a, n) => a + n.flushed, 0);
  assert.ok(total > 0, 'fp16 flushes some cells at ×10');
  let marked = 0;
  for (const [step, name, stage] of SHOWN) {
    await page.locator(`nav.steps button[data-step="${step}"]`).click();
    await settle(page);
    const { count, marked: cells } = await flushedMarks(page, name);
    assert.ok(count > 0, `${name} is drawn`);
    assert.deepEqual(cells, out[stage], `${name}: page marks = engine's flushed cells of ${stage}`);
    marked += cells.length;
    if (step === 6) await screenshot(page, 'walk-fp16-flushed-softmax');
  }
  assert.ok(marked > 0, 'some flushed cell is on screen');
});

test('fp32: no cell is marked flushed', async () => {
  const { page } = ctx;
  await setPrecision(page, 'fp32', 10);
  for (const step of [3, 6, 10]) {
    await page.locator(`nav.steps button[data-step="${step}"]`).click();
    await settle(page);
    assert.equal(await page.locator('g.cell.flushed').count(), 0, `step ${step}`);
  }
});
