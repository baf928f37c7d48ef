// §5: the induction experiment trained live in the chapter. Its quick run in the experiments'
// worker draws, on one step axis, the two in-context losses and the best induction score of the
// 2-layer model and then of its 1-layer twin; every curve drawn is the progress points' values,
// which are the result's series point for point, and the phase-change band is the window of the
// result's phase_change table (the 2-layer model's only). Screenshots at 1366 and 390 px in both
// languages.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { drawDeferredFigures, launch, screenshotDir, settle } from './support.mjs';

let b;
let page;
before(async () => {
  b = await launch({ isolation: true });
  page = await b.newPage('?view=chapters&chapter=5&lang=en');
});
after(async () => {
  await b?.close();
});

const PANEL = 'section.experiment[data-experiment="induction"]';

/** The induction panel alone (the chapter around it is long). */
async function shot(name) {
  mkdirSync(screenshotDir, { recursive: true });
  await page.locator(PANEL).screenshot({ path: join(screenshotDir, `${name}.png`) });
}

async function ready(lang) {
  await page.goto(`${b.url}?view=chapters&chapter=5&lang=${lang}`);
  await page.waitForFunction((sel) => document.querySelector(sel)?.dataset.available === '1', PANEL, { timeout: 90000, polling: 100 });
  await drawDeferredFigures(page);
}

/** What the live view drew: each path's step and value lists, each band's window. */
const drawn = () =>
  page.$eval(`${PANEL} .induction-live`, (el) => ({
    lines: Object.fromEntries(
      Array.from(el.querySelectorAll('figure[data-chart="induction-loss"] path[data-line], figure[data-chart="induction-score"] path[data-line]'), (p) => [
        `${p.closest('figure').dataset.chart}/${p.dataset.line}`,
        { x: JSON.parse(p.dataset.x), y: JSON.parse(p.dataset.y) },
      ]),
    ),
    bands: Array.from(el.querySelectorAll('rect.phase'), (r) => ({ chart: r.closest('figure').dataset.chart, run: r.dataset.run, start: Number(r.dataset.start), end: Number(r.dataset.end), final: r.dataset.final })),
    phase: el.querySelector('.ind-phase')?.textContent ?? '',
  }));

test('the quick induction run draws the engine\'s progress points live and marks the result\'s window', async () => {
  await ready('en');
  const panel = page.locator(PANEL);
  assert.equal(await panel.locator('input[data-quick]').isChecked(), true, 'quick is the default');
  await panel.locator('button[data-act="run"]').click();
  // While the 2-layer model trains, its curves grow from the progress points.
  await page.waitForFunction((sel) => document.querySelectorAll(`${sel} .induction-live path[data-line]`).length >= 3, PANEL, { timeout: 60000, polling: 100 });
  const early = await drawn();
  assert.ok(Object.keys(early.lines).some((k) => k.endsWith('2-layer:repeated')), 'the 2-layer repeated-half curve is drawn while it trains');
  await page.waitForFunction((sel) => ['done', 'error', 'stopped'].includes(document.querySelector(sel).dataset.phase), PANEL, { timeout: 180000, polling: 250 });
  assert.equal(await panel.getAttribute('data-phase'), 'done', await panel.locator('.exp-status').textContent());
  await settle(page);

  const r = await page.evaluate(() => window.__attnlab.chapters().results.induction);
  const d = await drawn();
  const series = Object.fromEntries(r.series.map((s) => [s.name, s]));
  const nullable = (ys) => ys.map((v) => (v === null || Number.isNaN(v) ? null : v));
  for (const [i, run] of ['2-layer', '1-layer'].entries()) {
    const x = series.repeated_half_loss.x;
    for (const [chart, part, name] of [['induction-loss', 'first', 'first_half_loss'], ['induction-loss', 'repeated', 'repeated_half_loss'], ['induction-score', 'score', 'induction_score']]) {
      const line = d.lines[`${chart}/${run}:${part}`];
      assert.ok(line, `${run} ${part} is drawn`);
      assert.deepEqual(line.x, x, `${run} ${part}: one point per logged step, step 0 first`);
      assert.deepEqual(nullable(line.y), nullable(series[name].lines[i].y), `${run} ${part}: the drawn values are the engine's series`);
    }
  }
  // The band is the result's window, on both plots, for the 2-layer model only.
  const table = r.tables.find((t) => t.name === 'phase_change');
  const row = (run) => table.rows.find((x) => x[0] === run);
  const col = (name) => table.columns.indexOf(name);
  assert.equal(r.verdict, 'held', r.conclusion);
  assert.equal(row('2-layer')[col('phase change')], 'yes');
  assert.equal(row('1-layer')[col('phase change')], 'no');
  const start = Number(row('2-layer')[col('start step')]), end = Number(row('2-layer')[col('end step')]);
  assert.deepEqual(d.bands, ['induction-loss', 'induction-score'].map((chart) => ({ chart, run: '2-layer', start, end, final: '1' })));
  assert.ok(d.phase.includes(`between steps ${start} and ${end}`), d.phase);
  assert.ok(d.phase.includes('1-layer: no phase change'), d.phase);
  assert.ok(r.conclusion.includes(`between steps ${start} and ${end}`), r.conclusion);

  for (const width of [1366, 390]) {
    await page.setViewportSize({ width, height: 900 });
    await settle(page);
    await shot(`chapter5-induction-en-${width}`);
  }
  await page.setViewportSize({ width: 1360, height: 900 });

  // The Chinese page: the same run's drawing and its texts in Chinese.
  await ready('zh');
  await panel.locator('button[data-act="run"]').click();
  await page.waitForFunction((sel) => ['done', 'error', 'stopped'].includes(document.querySelector(sel).dataset.phase), PANEL, { timeout: 180000, polling: 250 });
  await settle(page);
  const z = await drawn();
  assert.deepEqual(z.bands.map((x) => [x.start, x.end]), [[start, end], [start, end]], 'the same window in Chinese');
  assert.ok(z.phase.includes(`相变发生在第 ${start} 步到第 ${end} 步之间`), z.phase);
  const captions = await page.$$eval(`${PANEL} .induction-live figcaption`, (els) => els.map((e) => e.textContent));
  assert.deepEqual(captions, ['留出的重复序列上的上下文损失', '各头中最高的归纳分数']);
  for (const width of [1366, 390]) {
    await page.setViewportSize({ width, height: 900 });
    await settle(page);
    await shot(`chapter5-induction-zh-${width}`);
  }
  // A goto aborts the old page's loads in flight (its engine loader): not a problem of the page.
  assert.deepEqual(b.problems.filter((p) => !/net::ERR_ABORTED|NS_BINDING_ABORTED/.test(p)), []);
});
