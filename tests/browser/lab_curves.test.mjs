// The lab's training-dynamics curves: gradient norm, largest attention score and per-head entropy
// drawn beside loss and accuracy, on linked x-axes (a pointer over one chart reads the same step on
// all of them), with every value read out equal to the engine's StepMetrics of that step.
//   node --test tests/browser/lab_curves.test.mjs
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { labUrl, launch, screenshot, traceMainThreadTasks, waitForLabPhase } from './support.mjs';

const STEPS = 40;
let b;
let page;
before(async () => {
  b = await launch({ isolation: true });
  page = await b.newPage(labUrl({ task: 'reverse', length: 4, vocab: 6, layers: 2, dModel: 16, heads: 2, kvHeads: 2, positional: 'rope', norm: 'pre', scale: 1, lr: 0.003, batch: 16, steps: STEPS, seed: 1 }));
  await page.evaluate(() => window.__attnlab.ready);
  await waitForLabPhase(page, 'idle');
});
after(async () => {
  await b?.close();
});

const readout = (v) => (!Number.isFinite(v) ? '—' : v !== 0 && Math.abs(v) < 1e-3 ? v.toExponential(2) : v.toFixed(4));

test('training with the five linked charts runs with no main-thread task over 50 ms of CPU', async () => {
  const tasks = await traceMainThreadTasks(page, async () => {
    await page.locator('.lab button[data-act="train"]').click();
    await page.waitForFunction(() => window.__attnlab.lab().phase === 'done', null, { timeout: 120000, polling: 250 });
  });
  const long = tasks.filter((t) => t.cpuMs > 50);
  assert.deepEqual(long, [], `main-thread tasks over 50 ms of CPU: ${JSON.stringify(long)}`);
});

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
  // The box is in viewport coordinates, where the mouse moves: the chart must be in view.
  await page.locator('figure[data-curve="loss"] svg').scrollIntoViewIfNeeded();
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

test('the head view draws one line per (query, key) weighted by the engine’s attention map of the chosen layer and head', async () => {
  const view = page.locator('section.head-view');
  await view.waitFor({ state: 'visible' });
  for (const [layer, head] of [[0, 0], [1, 1]]) {
    await page.selectOption('select[name="hvLayer"]', String(layer));
    await page.selectOption('select[name="hvHead"]', String(head));
    await page.waitForFunction(([l, h]) => {
      const svg = document.querySelector('section.head-view svg');
      return svg.dataset.layer === String(l) && svg.dataset.head === String(h);
    }, [layer, head]);
    const r = await page.evaluate(([l, h]) => {
      const m = window.__attnlab.lab().maps;
      const [, H, T] = m.shape;
      const off = (l * H + h) * T * T;
      const lines = Array.from(document.querySelectorAll('section.head-view line.attn'), (e) => ({ i: Number(e.dataset.i), j: Number(e.dataset.j), w: Number(e.dataset.w), opacity: Number(e.getAttribute('stroke-opacity')) }));
      return { T, lines, want: Array.from(m.data.subarray(off, off + T * T)), labels: Array.from(document.querySelectorAll('section.head-view text.tok-q'), (e) => e.textContent) };
    }, [layer, head]);
    assert.equal(r.lines.length, r.T * r.T);
    assert.equal(r.labels.length, r.T);
    for (const l of r.lines) {
      assert.equal(Math.fround(l.w), r.want[l.i * r.T + l.j], `line ${l.i}→${l.j} weight`);
      assert.ok(Math.abs(l.opacity - l.w) < 1e-6);
    }
  }
  await page.locator('section.head-view text.tok-q[data-index="1"]').hover();
  const visible = await page.$$eval('section.head-view line.attn', (ls) => ls.filter((l) => l.getAttribute('visibility') !== 'hidden').map((l) => Number(l.dataset.i)));
  assert.ok(visible.length > 0 && visible.every((i) => i === 1), 'hovering query 1 keeps only its lines');
  await view.scrollIntoViewIfNeeded();
  await screenshot(page, 'lab-head-view');
});

test('with more heads than colours, no two entropy lines share a colour and dash, and each key is drawn as its line', async () => {
  const many = await b.newPage(labUrl({ task: 'reverse', length: 4, vocab: 6, layers: 3, dModel: 16, heads: 4, kvHeads: 4, positional: 'rope', norm: 'pre', scale: 1, lr: 0.003, batch: 8, steps: 6, seed: 1 }));
  try {
    await many.evaluate(() => window.__attnlab.ready);
    await waitForLabPhase(many, 'idle');
    await many.locator('.lab button[data-act="train"]').click();
    await many.waitForFunction(() => window.__attnlab.lab().phase === 'done', null, { timeout: 120000, polling: 250 });
    const chart = await many.$eval('figure[data-curve="entropy"]', (f) => ({
      lines: Array.from(f.querySelectorAll('path.line'), (p) => `${p.getAttribute('stroke')} ${p.getAttribute('stroke-dasharray') ?? ''}`),
      keys: Array.from(f.querySelectorAll('.curve-keys .key'), (k) => ({ label: k.textContent, swatch: k.firstElementChild?.getAttribute('style') ?? '' })),
    }));
    assert.equal(chart.lines.length, 3 * 4, 'one line per layer and head');
    assert.equal(new Set(chart.lines).size, chart.lines.length, `every line is told apart: ${chart.lines.join(' | ')}`);
    assert.equal(new Set(chart.lines.map((l) => l.split(' ')[0])).size < chart.lines.length, true, 'colours alone repeat here: the dashes tell them apart');
    assert.deepEqual(chart.keys.map((k) => k.label), Array.from({ length: 12 }, (_, k) => `L${Math.floor(k / 4)} H${k % 4}`));
    assert.equal(new Set(chart.keys.map((k) => k.swatch)).size, chart.keys.length, 'no two keys are drawn alike');
  } finally {
    await many.close();
  }
});
