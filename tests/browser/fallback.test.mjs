// Without COOP/COEP (serve.mjs --no-isolation) the page loads the single-threaded build, says so,
// and the walkthrough still shows the engine's numbers.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { compareMatrix, engineReference, launch, readMatrix, screenshot, settle, waitForWalkthrough } from './support.mjs';

let b;
let page;
before(async () => {
  b = await launch({ isolation: false });
  page = await b.newPage('?view=walk');
  await waitForWalkthrough(page);
});
after(async () => {
  await b?.close();
});

test('a page that is not cross-origin isolated runs the single-threaded build and says so', async () => {
  const r = await page.evaluate(() => ({ iso: crossOriginIsolated, sab: typeof SharedArrayBuffer, info: window.__attnlab.info, badge: document.querySelector('[data-engine-badge]').textContent, why: document.querySelector('[data-engine-badge]').title }));
  assert.equal(r.iso, false);
  assert.equal(r.info.flavour, 'single');
  assert.equal(r.info.threads, 1);
  // The badge says which build in a few words; why is on hover (one header line).
  assert.match(r.badge, /^engine: single-threaded · /);
  assert.match(r.why, /not cross-origin isolated/);
});

test('the fallback computes the same walkthrough stages as the engine', async () => {
  const ref = await engineReference(page);
  await page.locator('nav.steps button[data-step="6"]').click();
  await settle(page);
  compareMatrix(assert, await readMatrix(page, 'weights'), ref.weights[0], 'weights');
  await page.locator('nav.steps button[data-step="10"]').click();
  await settle(page);
  compareMatrix(assert, await readMatrix(page, 'output'), ref.output[0], 'output');
  await screenshot(page, 'fallback-output');
});

test('no console errors or failed requests', () => {
  assert.deepEqual(b.problems, []);
});
