// The lab's training-dynamics curves: gradient norm, largest attention score and per-head entropy
// drawn beside loss and accuracy, on linked x-axes (a pointer over one chart reads the same step on
// all of them), with every value read out equal to the engine's StepMetrics of that step.
//   node --test tests/browser/lab_curves.test.mjs
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { labUrl, launch, screenshot, waitForLabPhase } from './support.mjs';

const STEPS = 40;
let b;
let page;
before(async () => {
  b = await launch({ isolation: true });
  page = await b.newPage(labUrl({ task: 'reverse', length: 4, vocab: 6, layers: 2, dModel: 16, heads: 2, kvHeads: 2, positional: 'rope', norm: 'pre', scale: 1, lr: 0.003, batch: 16, steps: STEPS, seed: 1 }));
  await page.evaluate(() => window.__attnlab.ready);
  await waitForLabPhase(page, 'idle');
  await page.locator('.lab button[data-act="train"]').click();
  await waitForLabPhase(page, 'done', 120000);
});
after(async () => {
  await b?.close();
});

const readout = (v) => (!Number.isFinite(v) ? '—' : v !== 0 && Math.abs(v) < 1e-3 ? v.toExponential(2) : v.toFixed(4));

test('gradient norm, max score and one entropy line per (layer, head) are drawn with loss and accuracy', async () => {
  const curves = await page.$$eval('.curves figure.curve', (fs) => fs.map((f) => ({ name: f.dataset.curve, lines: f.querySelectorAll('path.line').length, empty: Array.from(f.querySelectorAll('path.line')).some((p) => !p.getAttribute('d')) })));
  const by = Object.fromEntries(curves.map((c) => [c.name, c]));
  for (const name of ['loss', 'accuracy', 'grad-norm', 'max-score', 'entropy']) assert.ok(by[name], `chart ${name} is drawn (${curves.map((c) => c.name)})`);
  assert.equal(by.entropy.lines, 2 * 2, 'one entropy line per layer and head');
  for (const c of curves) assert.equal(c.empty, false, `${c.name}: every line has points`);
  const keys = await page.$$eval('figure[data-curve="entropy"] .curve-keys .key', (k) => k.map((e) => e.textContent));
  assert.deepEqual(keys, ['L0 H0', 'L0 H1', 'L1 H0', 'L1 H1']);
});

test('a pointer over the loss chart reads the same step on every chart, equal to the engine’s metrics', async () => {
  const box = await page.locator('figure[data-curve="loss"] svg').boundingBox();
  await page.mouse.move(box.x + box.width * 0.6, box.y + box.height / 2);
  await page.waitForFunction(() => document.querySelector('.curves').dataset.step !== undefined);
  const step = Number(await page.locator('.curves').getAttribute('data-step'));
  assert.ok(step > 0 && step <= STEPS, `step ${step}`);
  const m = await page.evaluate((k) => window.__attnlab.lab().metrics.filter((x) => x.step <= k).at(-1), step);
  const caption = async (name) => page.locator(`figure[data-curve="${name}"] figcaption .c`).textContent();
  assert.equal(await caption('loss'), `@${step}: ${readout(m.loss)}`);
  assert.equal(await caption('accuracy'), `@${step}: ${readout(m.accuracy)}`);
  assert.equal(await caption('grad-norm'), `@${step}: ${readout(m.gradNorm)}`);
  assert.equal(await caption('max-score'), `@${step}: ${readout(m.maxScore)}`);
  assert.equal(await caption('entropy'), `@${step}: ` + m.headEntropy.map((v, k) => `L${Math.floor(k / 2)} H${k % 2} ${readout(v)}`).join(' · '));
  const rules = await page.$$eval('.curves line.rule', (ls) => ls.map((l) => ({ vis: l.getAttribute('visibility'), x: Number(l.getAttribute('x1')) })));
  assert.equal(rules.length, 5);
  for (const r of rules) assert.equal(r.vis, 'visible');
  assert.ok(rules.every((r) => Math.abs(r.x - rules[0].x) < 1e-6), 'the rule sits at the same x on every chart (same domain and width)');
  await page.locator('.curves').scrollIntoViewIfNeeded();
  await screenshot(page, 'lab-curves-linked');
  await page.mouse.move(0, 0);
  await page.waitForFunction(() => document.querySelector('.curves').dataset.step === undefined);
});
