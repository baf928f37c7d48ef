// Flushed cells on screen: with fp16 the cells marked as flushed to zero (data-flushed) in every
// stage the walkthrough shows are exactly the cells a separate engine's fp16 trace names
// (Trace.flushedCells), and none are marked in fp32.
//   node --test tests/browser/walk_flush.test.mjs
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { engineReference, screenshot, settle, useWalkthroughPage, waitForStill } from './support.mjs';

const ctx = useWalkthroughPage({ isolation: false });

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
  const ref = await engineReference(page);
  const total = Object.values(ref).reduce((a, heads) => a + heads.reduce((n, t) => n + t.flushed.length, 0), 0);
  assert.ok(total > 0, 'fp16 flushes some cells at ×10');
  let marked = 0;
  for (const [step, name, stage] of SHOWN) {
    await page.locator(`nav.steps button[data-step="${step}"]`).click();
    await settle(page);
    const { count, marked: cells } = await flushedMarks(page, name);
    assert.ok(count > 0, `${name} is drawn`);
    assert.deepEqual(cells, ref[stage][0].flushed, `${name}: page marks = engine's flushed cells of ${stage} (head 0)`);
    marked += cells.length;
    if (step === 6) {
      await waitForStill(page);
      await screenshot(page, 'walk-fp16-flushed-softmax');
    }
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
