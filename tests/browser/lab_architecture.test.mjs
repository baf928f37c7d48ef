// The lab's architecture control: an LSTM disables the Transformer-only fields and says why, the
// engine's parameter count is shown for either architecture (so they can be compared at equal
// size), an LSTM trains in the page with its loss and accuracy curves drawn, and its attention-map
// panel says it has none instead of drawing.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { openLab, screenshot, settle, waitForLabDone } from './support.mjs';

let b;
let page;
before(async () => {
  ({ b, page } = await openLab({ task: 'brackets', architecture: 'lstm', layers: 1, dModel: 32, steps: 150, seed: 1 }));
});
after(async () => {
  await b?.close();
});

const lab = () => page.evaluate(() => window.__attnlab.lab());
const field = (name) => page.locator(`.lab-settings [name="${name}"]`);
const countText = () => page.locator('.lab-settings .param-count').textContent();

// The count the engine reports for the form's settings (the store's, set by a lab.count request).
async function formCount(architecture) {
  await page.waitForFunction((a) => window.__attnlab.lab().formParameters?.architecture === a, architecture, { timeout: 10000 });
  return (await lab()).formParameters.count;
}

test('the URL picks the LSTM; the Transformer-only fields are disabled with the reason', async () => {
  assert.equal(await field('architecture').inputValue(), 'lstm');
  for (const name of ['heads', 'kvHeads', 'positional', 'norm', 'scale']) assert.equal(await field(name).isDisabled(), true, `${name} is disabled`);
  for (const name of ['layers', 'dModel', 'lr', 'steps']) assert.equal(await field(name).isDisabled(), false, `${name} stays`);
  assert.equal(await page.locator('.arch-note').isVisible(), true);
  assert.match(await page.locator('.arch-note').textContent(), /no attention heads, positional encoding, LayerNorm or score scaling/);
  assert.match(page.url(), /architecture=lstm/);
});

test('the engine\'s parameter count is shown for both architectures', async () => {
  // brackets with 2 kinds: V = 5 tokens, K = 2 classes; one LSTM layer of width 32:
  // tok_emb 5x32, weight_ih and weight_hh 128x32, two biases 128, head 2x32 + 2.
  const lstm = await formCount('lstm');
  assert.equal(lstm, 5 * 32 + 2 * 128 * 32 + 2 * 128 + 2 * 32 + 2);
  assert.match(await countText(), new RegExp(`LSTM of these settings: ${lstm.toLocaleString('en-US')} parameters`));
  await field('architecture').selectOption('transformer');
  await settle(page);
  const transformer = await formCount('transformer');
  assert.notEqual(transformer, lstm);
  assert.match(await countText(), new RegExp(`Transformer of these settings: ${transformer.toLocaleString('en-US')} parameters`));
  assert.equal(await field('heads').isDisabled(), false, 'a Transformer uses its heads');
  assert.equal(await page.locator('.arch-note').isHidden(), true);
  await field('architecture').selectOption('lstm');
  await settle(page);
  assert.equal(await formCount('lstm'), lstm);
});

test('an LSTM trains in the page: curves and accuracy, and no attention maps', async () => {
  await page.locator('.lab button[data-act="train"]').click();
  await waitForLabDone(page, 120000);
  const s = await lab();
  assert.equal(s.error, null);
  assert.equal(s.model.settings.architecture, 'lstm');
  assert.equal(s.model.parameters, await formCount('lstm'), 'the trained model has the counted size');
  assert.equal(s.metrics.length, 150);
  const first = s.metrics.slice(0, 10).reduce((a, m) => a + m.loss, 0) / 10;
  const last = s.metrics.slice(-10).reduce((a, m) => a + m.loss, 0) / 10;
  assert.ok(last < first, `loss falls: ${first} -> ${last}`);
  assert.ok(s.metrics.every((m) => m.accuracy >= 0 && m.accuracy <= 1));
  assert.ok(s.metrics.slice(-10).some((m) => m.accuracy > 0.5), 'better than chance at the end');
  assert.equal(s.maps, null, 'the engine sent no maps');
  for (const curve of ['loss', 'accuracy']) {
    const d = await page.locator(`.curves figure[data-curve="${curve}"] path.line`).getAttribute('d');
    assert.ok(d && d.length > 100, `${curve} curve drawn`);
  }
  assert.equal(await page.locator('.maps-none').isVisible(), true);
  assert.match(await page.locator('.maps-none').textContent(), /An LSTM has no attention maps/);
  assert.equal(await page.locator('.lab-maps figure').count(), 0);
  assert.match(await countText(), /the current model \(LSTM\): /);
  await screenshot(page, 'lab-lstm');
});

test('the walkthrough says an LSTM from the lab has no attention to walk through', async () => {
  await page.locator('nav.tabs button[data-view="walk"]').click();
  await page.waitForFunction(() => window.__attnlab.walk().status === 'ready', null, { timeout: 30000 });
  await page.locator('select[name="model"]').selectOption('trained');
  await page.waitForFunction(() => window.__attnlab.walk().status === 'error', null, { timeout: 20000 });
  assert.match((await page.evaluate(() => window.__attnlab.walk())).error, /the lab’s model is an LSTM: it has no attention to walk through/);
  await page.locator('select[name="model"]').selectOption('random');
  await page.waitForFunction(() => window.__attnlab.walk().status === 'ready', null, { timeout: 20000 });
  await page.locator('nav.tabs button[data-view="lab"]').click();
  await settle(page);
});

test('a Transformer after the LSTM draws its maps again', async () => {
  await field('architecture').selectOption('transformer');
  await field('steps').fill('20');
  await settle(page);
  await page.locator('.lab button[data-act="train"]').click();
  await waitForLabDone(page, 120000);
  await page.waitForFunction(() => document.querySelectorAll('.lab-maps figure').length > 0, null, { timeout: 10000 });
  assert.equal(await page.locator('.maps-none').isHidden(), true);
});
