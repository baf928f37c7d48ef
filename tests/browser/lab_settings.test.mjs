// The lab's settings: every task trains with the values the form shows when it is picked (brackets
// with its 1..4 bracket kinds, char-LM with a useful window), values the engine would refuse are
// named in the form's words before anything runs, and a run that would take long waits for the
// reader, with its estimated time.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { openLab, screenshot, settle, waitForLabPhase, waitForLabSteps } from './support.mjs';

let b;
let page;
before(async () => {
  ({ b, page } = await openLab({ task: 'reverse', steps: 600, seed: 1 }));
});
after(async () => {
  await b?.close();
});

const lab = () => page.evaluate(() => window.__attnlab.lab());
const click = (act) => page.locator(`.lab button[data-act="${act}"]`).click();
const field = (name) => page.locator(`.lab-settings [name="${name}"]`);
const problems = () => page.locator('.lab-settings .problems li').allTextContents();

test('brackets picked from the menu takes its own fields and trains with them', async () => {
  await field('task').selectOption('brackets');
  await settle(page);
  assert.equal(await field('vocab').inputValue(), '2', 'bracket kinds');
  assert.equal(await field('vocab').getAttribute('max'), '4', "the engine's limit: 4 bracket kinds");
  assert.equal(await page.locator('[data-label="vocab"]').textContent(), 'bracket kinds');
  assert.equal(await page.locator('[data-label="length"]').textContent(), 'max length');
  assert.deepEqual(await problems(), []);
  await click('train');
  await waitForLabSteps(page, 3);
  const s = await lab();
  assert.equal(s.error, null);
  assert.equal(s.phase, 'training');
  await click('reset');
  await waitForLabPhase(page, 'idle');
});

test('every task starts training with the values the form shows when it is picked', async () => {
  for (const task of ['reverse', 'copy', 'sort', 'assoc_recall', 'char_lm']) {
    await field('task').selectOption(task);
    await settle(page);
    assert.deepEqual(await problems(), [], `${task}: the defaults are valid`);
    await click('train');
    await waitForLabSteps(page, 2);
    const s = await lab();
    assert.equal(s.error, null, `${task}: ${JSON.stringify(s.error)}`);
    await click('reset');
    await waitForLabPhase(page, 'idle');
  }
  await field('task').selectOption('char_lm');
  await settle(page);
  assert.equal(await page.locator('.lab-settings [data-field="vocab"]').isHidden(), true, 'char-LM has no symbols field');
  assert.equal(await field('length').inputValue(), '32', 'a window long enough to learn from');
});

test('values the engine would refuse are named in the form, and Train does not start', async () => {
  await field('task').selectOption('reverse');
  await field('lr').fill('10');
  await field('length').fill('1000');
  await field('steps').fill('-5');
  await settle(page);
  const p = await problems();
  assert.ok(p.includes('length must be a whole number from 2 to 16 for reverse, not 1000.'), p.join('\n'));
  assert.ok(p.includes('learning rate must be from 0.00001 to 0.1, not 10.'), p.join('\n'));
  assert.ok(p.includes('steps must be a whole number from 1 to 20000, not -5.'), p.join('\n'));
  assert.equal(await field('lr').getAttribute('aria-invalid'), 'true');
  await click('train');
  await settle(page);
  const s = await lab();
  assert.equal(s.phase, 'idle', 'nothing reached the engine');
  assert.match(s.error.text, /^Fix the settings first: /);
  assert.doesNotMatch(await page.locator('.lab-banner').textContent(), /make_task|ConfigError/);
  await screenshot(page, 'lab-invalid-settings');
  await field('task').selectOption('assoc_recall');
  await field('length').fill('6');
  await field('vocab').fill('4');
  await field('lr').fill('0.003');
  await field('steps').fill('100');
  await settle(page);
  assert.deepEqual(await problems(), ['keys must be at least the number of pairs (6): every pair has its own key.']);
});

test('a run that would take long pauses with its estimated time until the reader confirms', async () => {
  await field('task').selectOption('char_lm');
  await field('length').fill('64');
  await field('layers').selectOption('4');
  await field('dModel').selectOption('128');
  await field('heads').selectOption('8');
  await field('steps').fill('20000');
  await settle(page);
  assert.deepEqual(await problems(), []);
  await click('train');
  await page.waitForFunction(() => window.__attnlab.lab().longRun !== null, null, { timeout: 60000, polling: 100 });
  await waitForLabPhase(page, 'paused');
  await settle(page);
  const banner = page.locator('.lab-banner');
  assert.equal(await banner.getAttribute('data-kind'), 'warning');
  assert.match(await banner.textContent(), /This run would take about (\d+ h \d+ min|\d+ min \d+ s) \([\d.]+ steps\/s here\)/);
  await screenshot(page, 'lab-long-run');
  const stepsBefore = (await lab()).metrics.length;
  await page.locator('.lab-banner button[data-act="long-run"]').click();
  await waitForLabPhase(page, 'training');
  await waitForLabSteps(page, stepsBefore + 1);
  await click('reset');
  await waitForLabPhase(page, 'idle');
});

test('no console errors or failed requests', () => {
  assert.deepEqual(b.problems, []);
});
