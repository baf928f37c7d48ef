// §7's series figure: the forecast drawn against the true continuation and the seasonal-naive
// baseline is the engine's. A separate engine instance in the page's main thread trains the same
// seeded forecaster in the same chunks of 25 steps (web/src/chapters/figures/forecast.compute.ts)
// and its model.forecast, the held-out series and the evaluation are compared with the plotted
// points, for both positional encodings the figure offers; the figure is drawn again, with the same
// numbers, after a language switch.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { launch, loadReferenceEngine, screenshot } from './support.mjs';

let b;
let page;
before(async () => {
  b = await launch({ isolation: true });
  page = await b.newPage('?view=chapters&chapter=7&lang=en');
});
after(async () => {
  await b?.close();
});

const forecastReady = () =>
  page.waitForFunction(() => window.__attnlab?.chapters?.().figures.forecast === 'ready', null, { timeout: 90000, polling: 50 });

/** The plotted points of each horizon line and the note's held-out MSEs. */
const shown = () =>
  page.evaluate(() => {
    const pts = (name) => Array.from(document.querySelectorAll(`figure[data-chart="forecast"] circle.pt[data-series="${name}"]`), (c) => [Number(c.dataset.step), Number(c.dataset.value)]);
    const note = document.querySelector('[data-figure="forecast"] .fig-note');
    return {
      forecast: pts('forecast'), truth: pts('truth'), baseline: pts('baseline'),
      mse: Number(note.dataset.mse), baselineMse: Number(note.dataset.baselineMse), note: note.textContent,
      title: document.querySelector('figure[data-chart="forecast"] figcaption').textContent,
      lines: Array.from(document.querySelectorAll('figure[data-chart="forecast"] path[data-line]'), (p) => p.dataset.line),
    };
  });

const references = {};
async function engine(positional = 'time') {
  if (references[positional]) return references[positional];
  await loadReferenceEngine(page);
  references[positional] = await page.evaluate((positional) => {
    const lab = window.__refLab;
    const task = new lab.Task('series', { periods: [12, 24], seed: 1 });
    const model = new lab.Model({ kind: 'forecaster', architecture: 'transformer', positional, numFeatures: 1, timePeriods: [12, 24],
      horizon: task.numClasses(), maxLen: task.seqLen(), dModel: 32, numHeads: 2, ffDim: 64, numLayers: 1, seed: 1 });
    const trainer = new lab.Trainer(model, task, { lr: 3e-3, batchSize: 16, warmupSteps: 10, seed: 1, trackAttention: false });
    const steps = 300;
    while (trainer.stepsDone() < steps) trainer.step(Math.min(25, steps - trainer.stepsDone()));
    const held = trainer.evaluate(8);
    const batch = task.sample(1, 1001);
    const f = model.forecast(batch.values, batch.time);
    const out = { mse: held.loss, baselineMse: held.baselineMse, forecast: Array.from(f.data), truth: Array.from(batch.forecast.data), baseline: Array.from(batch.baseline.data) };
    trainer.delete(); model.delete(); task.delete();
    return out;
  }, positional);
  return references[positional];
}

function compare(s, ref) {
  const horizon = ref.truth.length;
  assert.equal(horizon, 12, 'the series task\'s default horizon');
  for (const name of ['forecast', 'truth', 'baseline']) {
    assert.deepEqual(s[name].map(([j]) => j), [...Array(horizon).keys()], `${name}: one point per forecast step`);
    // Truth and baseline are the task's float32 numbers (data-value is the shortest text that
    // reads back as the same float32); the forecast is computed by the page's threaded engine and
    // by the single-threaded reference (equal to float rounding).
    const same = name === 'forecast' ? (v, r) => Math.abs(v - r) <= 1e-5 : (v, r) => Math.fround(v) === Math.fround(r);
    s[name].forEach(([j, v]) => assert.ok(same(v, ref[name][j]), `${name} step ${j}: page ${v}, engine ${ref[name][j]}`));
  }
  assert.ok(Math.abs(s.mse - ref.mse) <= 1e-6, `held-out MSE: page ${s.mse}, engine ${ref.mse}`);
  assert.equal(s.baselineMse, ref.baselineMse);
}

test('§7 the plotted forecast, truth and seasonal-naive baseline are the engine\'s', async () => {
  await forecastReady();
  const s = await shown();
  const ref = await engine();
  compare(s, ref);
  assert.deepEqual(s.lines, ['context', 'truth', 'baseline', 'forecast']);
  assert.match(s.title, /48 context steps, then the 12 steps forecast/);
  assert.match(s.note, /time-aware encoding/);
  await page.locator('[data-figure="forecast"]').screenshot({ path: await screenshot(page, 'chapter7-forecast-en').then((p) => p.replace(/\.png$/, '-figure.png')) });
  assert.ok(ref.mse < ref.baselineMse, `the trained forecaster beats the seasonal-naive baseline (MSE ${ref.mse} vs ${ref.baselineMse})`);
});

test('§7 the forecast figure survives a language switch with the same numbers', async () => {
  await forecastReady();
  const ref = await engine();
  await page.locator('.lang-switch button[data-lang="zh"]').click();
  await page.waitForFunction(() => /上下文/.test(document.querySelector('figure[data-chart="forecast"] figcaption')?.textContent ?? ''), null, { timeout: 90000, polling: 50 });
  await forecastReady();
  const zh = await shown();
  assert.match(zh.title, /一条留出序列：48 步上下文/);
  await page.locator('[data-figure="forecast"]').screenshot({ path: await screenshot(page, 'chapter7-forecast-zh').then((p) => p.replace(/\.png$/, '-figure.png')) });
  compare(zh, ref);
  await page.locator('.lang-switch button[data-lang="en"]').click();
  await page.waitForFunction(() => /context steps/.test(document.querySelector('figure[data-chart="forecast"] figcaption')?.textContent ?? ''), null, { timeout: 90000, polling: 50 });
  await forecastReady();
  compare(await shown(), ref);
});

test('§7 the sinusoidal forecaster, chosen in the figure, is the engine\'s too and kept in the URL', async () => {
  await forecastReady();
  await page.locator('[data-figure="forecast"] select[data-control="pos"]').selectOption('sinusoidal');
  await page.waitForFunction(() => document.querySelector('[data-figure="forecast"] .fig-note')?.dataset.positional === 'sinusoidal', null, { timeout: 90000, polling: 50 });
  await forecastReady();
  const s = await shown();
  const ref = await engine('sinusoidal');
  compare(s, ref);
  assert.match(s.note, /sinusoidal encoding/);
  assert.equal(new URL(page.url()).searchParams.get('f.forecast.pos'), 'sinusoidal');
  const time = await engine('time');
  assert.ok(time.mse < ref.mse, `the time-aware encoding forecasts better here (held-out MSE ${time.mse} vs sinusoidal ${ref.mse})`);
});
