// Compare runs: finished runs are kept with their settings and curves; "train again without
// scaling" is one click, and the two runs are then overlaid on shared axes with exactly the
// differing setting (scale) highlighted; every curve value is a run's StepMetrics.
//   node --test tests/browser/lab_compare.test.mjs
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { labUrl, launch, screenshot, waitForLabPhase } from './support.mjs';

const STEPS = 30;
let b;
let page;
before(async () => {
  b = await launch({ isolation: true });
  page = await b.newPage(labUrl({ task: 'reverse', length: 4, vocab: 6, layers: 1, dModel: 16, heads: 2, kvHeads: 2, positional: 'rope', norm: 'pre', scale: 1, lr: 0.003, batch: 16, steps: STEPS, seed: 1 }));
  await page.evaluate(() => window.__attnlab.ready);
  await waitForLabPhase(page, 'idle');
});
after(async () => {
  await b?.close();
});

test('a finished run is kept; one click trains the unscaled variant; the overlay highlights exactly what differs', async () => {
  assert.equal(await page.locator('section.compare .run-list li').count(), 0);
  await page.locator('.lab button[data-act="train"]').click();
  await waitForLabPhase(page, 'done', 120000);
  await page.waitForFunction(() => window.__attnlab.lab().runs.length === 1);
  await page.locator('section.compare button[data-act="variant-scale"]').click();
  await page.waitForFunction(() => window.__attnlab.lab().runs.length === 2, null, { timeout: 120000, polling: 250 });
  const s = await page.evaluate(() => {
    const l = window.__attnlab.lab();
    return { runs: l.runs.map((r) => ({ id: r.id, scale: r.settings.scale, last: r.metrics.at(-1), n: r.metrics.length })), compare: l.compare, formScale: l.settings.scale };
  });
  assert.deepEqual(s.runs.map((r) => r.scale), [true, false]);
  assert.deepEqual(s.compare, [1, 2], 'the two newest runs are overlaid');
  assert.equal(s.formScale, false, 'the form follows the variant');
  await page.waitForFunction(() => document.querySelectorAll('section.compare .compare-curves figure').length === 3);
  const differs = await page.$$eval('section.compare tr.differs', (rows) => rows.map((r) => r.dataset.setting));
  assert.deepEqual(differs, ['scale']);
  for (const name of ['compare-loss', 'compare-accuracy', 'compare-grad-norm']) {
    const lines = await page.$$eval(`figure[data-curve="${name}"] path.line`, (ps) => ps.map((p) => p.getAttribute('d')));
    assert.equal(lines.length, 2, `${name}: one line per run`);
    assert.ok(lines.every(Boolean));
  }
  const items = await page.$$eval('section.compare .run-list li', (li) => li.map((l) => l.textContent));
  s.runs.forEach((r, i) => {
    assert.ok(items[i].includes(`loss ${r.last.loss.toFixed(4)}`), `run ${r.id}'s final loss is the engine's: ${items[i]}`);
    // The differing setting by the form's name for it.
    assert.match(items[i], r.scale ? /scale scores by 1\/√d_k on/ : /scale scores by 1\/√d_k off/);
  });
  // The overlay's readout at the last step is each run's own metric.
  await page.locator('figure[data-curve="compare-loss"]').scrollIntoViewIfNeeded();
  const box = await page.locator('figure[data-curve="compare-loss"] svg').boundingBox();
  await page.mouse.move(box.x + box.width - 13, box.y + box.height / 2);
  const text = await page.locator('figure[data-curve="compare-loss"] figcaption .c').textContent();
  for (const r of s.runs) assert.ok(text.includes(r.last.loss.toFixed(4)), `readout '${text}' has run ${r.id}'s loss ${r.last.loss}`);
  await page.locator('section.compare').scrollIntoViewIfNeeded();
  await screenshot(page, 'lab-compare-runs');
  // Unticking a run leaves one: no overlay.
  await page.locator('section.compare input[data-compare="1"]').uncheck();
  await page.waitForFunction(() => document.querySelectorAll('section.compare .compare-curves figure').length === 0);
});
