// The series task in the lab: a small forecaster trains with MSE and MAE curves beside the
// seasonal-naive baseline, and the plotted forecast of the held-out window equals the engine's
// Model.forecast of the saved checkpoint (loaded into a separate engine in the page); the truth and
// the baseline drawn are the task's own batch, and the head view's weights over the context steps
// are the checkpoint's Model.attentionMaps of the same window.
//   node --test tests/browser/lab_series.test.mjs
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { loadReferenceEngine, openLab, screenshot, waitForLabDone } from './support.mjs';

const STEPS = 40;
const SETTINGS = { task: 'series', architecture: 'transformer', length: 24, vocab: 6, layers: 1, dModel: 16, heads: 2, kvHeads: 2, positional: 'sinusoidal', norm: 'pre', scale: 1, lr: 0.003, batch: 16, steps: STEPS, seed: 1 };
let b;
let page;
before(async () => {
  ({ b, page } = await openLab(SETTINGS));
});
after(async () => {
  await b?.close();
});

test('a forecaster trains; the plotted forecast, truth and baseline equal the engine\'s', async () => {
  assert.equal(await page.locator('select[name="task"]').inputValue(), 'series');
  await page.locator('.lab button[data-act="train"]').click();
  await waitForLabDone(page, 120000);
  await page.waitForFunction((n) => window.__attnlab.lab().picture?.step === n, STEPS);
  const last = await page.evaluate(() => window.__attnlab.lab().metrics.at(-1));
  for (const k of ['loss', 'mae', 'baselineMse', 'baselineMae']) assert.ok(Number.isFinite(last[k]), `${k}: ${last[k]}`);
  assert.ok(Number.isNaN(last.accuracy) || last.accuracy == null);
  // MSE and MAE charts (each with the baseline), no accuracy chart.
  await page.waitForFunction(() => document.querySelectorAll('figure[data-curve="mae"] path.line').length === 2);
  assert.equal(await page.locator('figure[data-curve="accuracy"]').count(), 0);
  assert.equal(await page.locator('figure[data-curve="loss"] path.line').count(), 2);

  const [download] = await Promise.all([page.waitForEvent('download'), page.locator('.lab button[data-act="save"]').click()]);
  const checkpoint = readFileSync(await download.path());
  await loadReferenceEngine(page);
  const ref = await page.evaluate(async ({ bytes, s }) => {
    const lab = window.__refLab;
    const model = lab.Model.load(Uint8Array.from(bytes));
    const task = new lab.Task('series', { context: s.length, horizon: s.vocab, seed: s.seed });
    const batch = task.sample(1, 0xe7a1);
    const f = model.forecast(batch.values, batch.time);
    const maps = model.attentionMaps(batch.values, { time: batch.time, batch: 0 });
    const out = { forecast: Array.from(f.data), truth: Array.from(batch.forecast.data), baseline: Array.from(batch.baseline.data), context: Array.from(batch.values.data), maps: { shape: maps.shape, data: Array.from(maps.data) } };
    model.delete();
    task.delete();
    return out;
  }, { bytes: Array.from(checkpoint), s: SETTINGS });
  const drawn = await page.$$eval('section.lab-picture svg.forecast-plot path.line', (ps) => Object.fromEntries(ps.map((p) => [p.dataset.series, JSON.parse(p.dataset.values)])));
  assert.equal(drawn.forecast.length, SETTINGS.vocab);
  for (const key of ['forecast', 'truth', 'baseline', 'context']) {
    assert.equal(drawn[key].length, ref[key].length, key);
    drawn[key].forEach((v, i) => assert.ok(Math.abs(v - ref[key][i]) <= 1e-6, `${key}[${i}]: drawn ${v}, engine ${ref[key][i]}`));
  }
  // The head view draws the forecaster's attention over the same window's context steps: layer 0, head 0.
  await page.waitForFunction((n) => document.querySelectorAll('section.head-view line.attn').length === n * n, SETTINGS.length);
  const lines = await page.$$eval('section.head-view line.attn', (ls) => ls.map((l) => [Number(l.dataset.i), Number(l.dataset.j), Number(l.dataset.w)]));
  const T = ref.maps.shape[2];
  assert.equal(T, SETTINGS.length);
  for (const [i, j, w] of lines) assert.ok(Math.abs(w - ref.maps.data[i * T + j]) <= 1e-6, `weight (${i}, ${j}): drawn ${w}, engine ${ref.maps.data[i * T + j]}`);
  await page.locator('section.lab-picture').scrollIntoViewIfNeeded();
  await screenshot(page, 'lab-series-forecast');
});

test('no console errors or failed requests', () => {
  assert.deepEqual(b.problems, []);
});
