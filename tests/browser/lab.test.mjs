// The training lab. Until the engine build has the Model / Task / Trainer bindings, the lab must
// say so and show no numbers; with them, training the reverse task must lower the loss without
// main-thread long tasks (> 50 ms).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { launch, screenshot } from './support.mjs';

const STEPS = 300;
let b;
let page;
let info;
before(async () => {
  b = await launch({ isolation: true });
  page = await b.newPage(`?view=lab&task=reverse&length=4&vocab=6&layers=2&dModel=32&heads=4&kvHeads=4&positional=rope&norm=pre&scale=1&lr=0.003&batch=32&steps=${STEPS}&seed=1`);
  info = await page.evaluate(() => window.__attnlab.ready);
});
after(async () => {
  await b?.close();
});

test('the lab restores its settings from the URL', async () => {
  assert.equal(await page.locator('select[name="task"]').inputValue(), 'reverse');
  assert.equal(await page.locator('.lab input[name="steps"]').inputValue(), String(STEPS));
  assert.equal(await page.locator('.lab input[name="length"]').inputValue(), '4');
});

test('without trainer bindings the lab says so and shows no numbers', { skip: info?.training }, async (t) => {
  if (info.training) return t.skip('this build has the trainer bindings');
  const banner = page.locator('.lab-banner');
  await banner.waitFor();
  assert.match(await banner.textContent(), /Training engine not available in this build/);
  assert.equal(await page.locator('.lab button[data-act="train"]').isDisabled(), true);
  assert.equal(await page.locator('.lab-maps figure').count(), 0);
  await screenshot(page, 'lab-unavailable');
});

test('training the reverse task lowers the loss, with no main-thread task over 50 ms', async (t) => {
  if (!info.training) return t.skip(`this build lacks the ${info.trainingMissing.join(', ')} bindings`);
  await page.evaluate(() => {
    window.__longTasks = [];
    new PerformanceObserver((list) => window.__longTasks.push(...list.getEntries().map((e) => e.duration))).observe({ type: 'longtask', buffered: false });
  });
  await page.locator('.lab button[data-act="train"]').click();
  await page.waitForFunction(() => document.querySelector('.lab-banner').dataset.phase === 'done', null, { timeout: 120000 });
  const r = await page.evaluate(() => ({ longTasks: window.__longTasks, maps: document.querySelectorAll('.lab-maps figure').length }));
  const curve = await page.evaluate(() => window.__attnlab.lab?.().metrics ?? null);
  await screenshot(page, 'lab-trained');
  assert.deepEqual(r.longTasks.filter((d) => d > 50), [], 'main-thread long tasks while training');
  assert.ok(r.maps > 0, 'attention maps shown');
  if (curve) {
    const first = curve.slice(0, 10).reduce((a, m) => a + m.loss, 0) / 10;
    const last = curve.slice(-10).reduce((a, m) => a + m.loss, 0) / 10;
    assert.ok(last < 0.7 * first, `loss fell from ${first} to ${last}`);
  }
});

test('no console errors or failed requests', () => {
  assert.deepEqual(b.problems, []);
});
