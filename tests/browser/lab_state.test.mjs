// The lab's run state: Reset always gives a clean start, even while training; settings that only
// steer training continue the trained model instead of discarding it, and a change of the model
// itself asks before anything is thrown away.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { openLab, screenshot, settle, waitForLabPhase, waitForLabSteps, waitForLabDone } from './support.mjs';

let b;
let page;
before(async () => {
  ({ b, page } = await openLab({ task: 'reverse', length: 4, vocab: 6, steps: 3000, seed: 1 }));
});
after(async () => {
  await b?.close();
});

const lab = () => page.evaluate(() => window.__attnlab.lab());
const click = (act) => page.locator(`.lab button[data-act="${act}"]`).click();

test('Reset while training gives a clean start, and Train then trains a new model', async () => {
  await click('train');
  await waitForLabSteps(page, 30);
  await page.waitForFunction(() => document.querySelectorAll('.lab-maps figure').length > 0, null, { timeout: 30000 });
  await click('reset');
  // Events of the old run that were already on their way must not bring anything back.
  await page.waitForTimeout(1500);
  await settle(page);
  const s = await lab();
  assert.equal(s.phase, 'idle');
  assert.equal(s.metrics.length, 0, 'no curve points of the old run');
  assert.equal(s.maps, null);
  assert.equal(await page.locator('.lab-maps figure').count(), 0, 'no maps of the old run');
  assert.equal(await page.locator('.lab-stats').textContent(), 'step 0 / 3000');
  assert.doesNotMatch(await page.locator('.lab-banner').textContent(), /Paused/);
  await click('train');
  await waitForLabSteps(page, 5);
  const t = await lab();
  assert.equal(t.phase, 'training');
  assert.equal(t.error, null, 'Train after Reset creates a model');
  assert.equal(t.metrics[0].step, 1, 'the new run starts at step 1');
  await click('reset');
  await waitForLabPhase(page, 'idle');
});

test('changing the learning rate or steps after training continues the same model', async () => {
  await page.locator('.lab input[name="steps"]').fill('120');
  await click('train');
  await waitForLabDone(page, 90000);
  await page.waitForFunction(() => document.querySelectorAll('.lab-maps figure').length === 8, null, { timeout: 10000 });
  const before = await lab();
  assert.equal(before.metrics.at(-1).step, 120);
  await page.locator('.lab input[name="lr"]').fill('0.001');
  await page.locator('.lab input[name="steps"]').fill('60');
  await settle(page);
  const s = await lab();
  assert.ok(s.model, 'the model is kept');
  assert.equal(s.metrics.length, 120, 'its curves are kept');
  assert.equal(await page.locator('.lab-maps figure').count(), 8, 'its maps are kept');
  assert.match(await page.locator('.lab-banner').textContent(), /continues the current model for 60 more steps/);
  assert.equal(await page.locator('.lab button[data-act="train"]').textContent(), 'Train 60 more');
  await click('train');
  await waitForLabSteps(page, 180, 90000);  // the phase is 'done' until the continued run starts
  await waitForLabDone(page, 90000);
  await settle(page);
  const after = await lab();
  assert.equal(after.metrics.length, 180, 'the curve goes on');
  assert.equal(after.metrics.at(-1).step, 180);
  assert.equal(after.model.settings.lr, 0.001);
  assert.equal(await page.locator('.lab-stats').textContent().then((t) => t.split(' · ')[0]), 'step 180 / 180');
});

test('a change of the model asks first: the trained model stays until Train, or is kept', async () => {
  await page.locator('.lab select[name="layers"]').selectOption('1');
  await settle(page);
  const banner = page.locator('.lab-banner');
  assert.match(await banner.textContent(), /different model: Train builds a new one and discards the current model \(trained 180 steps/);
  assert.equal(await banner.getAttribute('data-kind'), 'warning');
  assert.equal(await page.locator('.lab-maps figure').count(), 8, 'nothing is discarded yet');
  await screenshot(page, 'lab-model-change');
  await page.locator('.lab-banner button[data-act="keep"]').click();
  await settle(page);
  assert.equal(await page.locator('.lab select[name="layers"]').inputValue(), '2', 'the form is back to the model');
  assert.doesNotMatch(await banner.textContent(), /different model/);
  assert.match(page.url(), /layers=2/);
  assert.equal((await lab()).metrics.length, 180);
});

test('no console errors or failed requests', () => {
  assert.deepEqual(b.problems, []);
});
