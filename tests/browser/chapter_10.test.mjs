// §10: the encoder is assembled piece by piece from the engine's model (its config and its
// parameter tensors), trained by the engine's Trainer with a live curve, and compared across
// positional encodings and attention variants. The counts and a run's numbers are recomputed here
// with a separate engine instance in the page's main thread.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { launch, screenshot } from './support.mjs';

let b;
let page;
before(async () => {
  b = await launch({ isolation: true });
  page = await b.newPage('?view=chapters&chapter=10&lang=en');
  await page.evaluate(() => window.__attnlab.ready);
});
after(async () => {
  await b?.close();
});

const builder = '[data-builder="encoder"]';

async function open(lang = 'en') {
  await page.goto(`${b.url}?view=chapters&chapter=10&lang=${lang}`);
  await page.waitForFunction((sel) => document.querySelector(sel)?.dataset.parts === 'ready', builder, { timeout: 90000, polling: 50 });
  await page.evaluate(async () => {
    if (window.__refLab) return;
    const { loadAttnLab } = await import(new URL('engine/loader.mjs', document.baseURI).href);
    window.__refLab = await loadAttnLab({ flavour: 'single' });
  });
}

/** The chapter's model built by the reference engine: { names, sizes, numParameters, config } (and, with steps, a trained run). */
const reference = (arg) =>
  page.evaluate(async ({ positional, attention, layers, steps }) => {
    const lab = window.__refLab;
    const task = new lab.Task('brackets', { length: 12, vocab: 2, seed: 1 });
    const model = new lab.Model({ kind: 'encoder', vocabSize: task.vocabSize(), numClasses: task.numClasses(), maxLen: Math.max(16, task.seqLen()), dModel: 32, numHeads: 4, ffDim: 64, numLayers: layers, positional,
      variant: attention === 'linear' ? 'linear' : 'full', attentionWindow: attention === 'window' ? 3 : 0, seed: 1 });
    const out = { names: model.parameterNames(), numParameters: model.numParameters(), config: model.config() };
    out.sizes = out.names.map((n) => model.getParameter(n).data.length);
    if (steps) {
      const trainer = new lab.Trainer(model, task, { lr: 3e-3, batchSize: 32, warmupSteps: 20, seed: 1, trackAttention: false });
      let m;
      while (trainer.stepsDone() < steps) m = trainer.step(Math.min(25, steps - trainer.stepsDone()));
      out.loss = m.loss;
      out.held = trainer.evaluate(16).accuracy;
      trainer.delete();
    }
    model.delete();
    task.delete();
    return out;
  }, arg);

const shown = () => page.evaluate((sel) => {
  const el = document.querySelector(sel);
  return {
    pieces: Number(el.dataset.pieces),
    counts: Object.fromEntries(Array.from(el.querySelectorAll('li[data-piece][data-added="true"]'), (li) => [li.dataset.piece, Number(li.querySelector('[data-count]').dataset.count)])),
    params: Array.from(el.querySelectorAll('table[data-stats="enc-params"] tr[data-param]'), (r) => r.dataset.param),
    total: Number(el.querySelector('tr[data-total]').dataset.total),
    numParameters: Number(el.querySelector('[data-num-parameters]').dataset.numParameters),
    fields: Object.fromEntries(Array.from(el.querySelectorAll('table[data-stats="enc-config"] tr[data-field]'), (r) => [r.dataset.field, r.querySelector('td').textContent])),
    train: el.querySelector('button[data-act="train"]').disabled,
  };
}, builder);

const pieceOf = (n) => (/\.attn\./.test(n) ? 'attention' : /\.ffn\./.test(n) ? 'ffn' : /(^|\.)ln(1|2|_f)\./.test(n) ? 'layernorm' : 'embedding');

test('§10 the encoder is assembled piece by piece, each with the engine\'s parameters and config fields', async () => {
  await open();
  const ref = await reference({ positional: 'sinusoidal', attention: 'full', layers: 1 });
  const order = ['embedding', 'attention', 'ffn', 'residual', 'layernorm'];
  let s = await shown();
  assert.equal(s.pieces, 1);
  assert.equal(s.train, true, 'training waits for every piece');
  assert.equal(s.numParameters, ref.numParameters);
  for (let k = 1; k <= order.length; k++) {
    const present = order.slice(0, k);
    const expected = ref.names.filter((n) => present.includes(pieceOf(n)));
    assert.deepEqual(s.params, expected, `after ${present.at(-1)}`);
    assert.equal(s.total, expected.reduce((a, n) => a + ref.sizes[ref.names.indexOf(n)], 0));
    for (const p of present) assert.equal(s.counts[p], ref.names.reduce((a, n, i) => a + (pieceOf(n) === p ? ref.sizes[i] : 0), 0), p);
    assert.equal(s.fields.dModel, String(ref.config.dModel));
    if (present.includes('attention')) assert.equal(s.fields.numHeads, String(ref.config.numHeads));
    else assert.equal(s.fields.numHeads, undefined);
    if (present.includes('ffn')) assert.equal(s.fields.ffDim, String(ref.config.ffDim));
    if (k < order.length) {
      await page.locator(`${builder} button[data-act="add"]`).click();
      s = await shown();
    }
  }
  assert.equal(s.counts.residual, 0, 'residuals are additions: no parameters');
  assert.equal(s.total, ref.numParameters, 'all pieces: the engine\'s numParameters()');
  assert.equal(s.train, false);
  // A learned table and a second block change the engine's model.
  await page.selectOption(`${builder} select[data-choice="positional"]`, 'learned');
  await page.selectOption(`${builder} select[data-choice="layers"]`, '2');
  await page.waitForFunction((sel) => document.querySelector(sel).dataset.parts === 'ready' && document.querySelector(`${sel} tr[data-field="numLayers"] td`).textContent === '2' && document.querySelector(`${sel} tr[data-field="positional"] td`).textContent === 'learned', builder);
  const two = await reference({ positional: 'learned', attention: 'full', layers: 2 });
  s = await shown();
  assert.equal(s.total, two.numParameters);
  assert.ok(s.params.includes('blocks.1.attn.q_proj.weight'));
  assert.ok(two.numParameters > ref.numParameters);
});

test('§10 training runs in the engine with a live curve; the run\'s numbers are the engine\'s', async () => {
  await open();
  for (let k = 1; k < 5; k++) await page.locator(`${builder} button[data-act="add"]`).click();
  await page.locator(`${builder} button[data-act="train"]`).click();
  await page.waitForFunction((sel) => document.querySelector(sel).dataset.phase === 'training' && document.querySelectorAll(`${sel} figure[data-chart="enc-loss"] path, ${sel} [data-chart="enc-loss"] path`).length > 0, builder, { timeout: 60000, polling: 20 });
  await page.waitForFunction((sel) => document.querySelector(sel).dataset.phase === 'trained', builder, { timeout: 120000 });
  const row = await page.evaluate((sel) => ({ ...document.querySelector(`${sel} tr[data-run="1"]`).dataset }), builder);
  assert.equal(row.positional, 'sinusoidal');
  const ref = await reference({ positional: 'sinusoidal', attention: 'full', layers: 1, steps: 300 });
  assert.equal(Number(row.loss), ref.loss);
  assert.equal(Number(row.heldAccuracy), ref.held);
});

test('§10 the article\'s path: each positional encoding, then window and linear attention, side by side', async () => {
  await open();
  for (let k = 1; k < 5; k++) await page.locator(`${builder} button[data-act="add"]`).click();
  await page.locator(`${builder} button[data-act="path"]`).click();
  await page.waitForFunction((sel) => document.querySelector(sel).dataset.phase === 'trained' && document.querySelector(sel).dataset.runs === '6', builder, { timeout: 600000, polling: 200 });
  const rows = await page.$$eval(`${builder} tr[data-run]`, (rs) => rs.map((r) => [r.dataset.positional, r.dataset.attention, Number(r.dataset.heldAccuracy)]));
  assert.deepEqual(rows.map((r) => r.slice(0, 2)), [['sinusoidal', 'full'], ['learned', 'full'], ['rope', 'full'], ['none', 'full'], ['sinusoidal', 'window'], ['sinusoidal', 'linear']]);
  for (const [, , acc] of rows) assert.ok(acc >= 0 && acc <= 1);
  const lines = await page.$$eval(`${builder} figure[data-chart="enc-loss"] .hist-keys > span.key`, (l) => l.length);
  assert.ok(lines >= 6, `${lines} legend keys`);
  // The runs survive a language switch; the table is in Chinese then.
  await page.locator('.lang-switch button[data-lang="zh"]').click();
  await page.waitForFunction(() => document.documentElement.lang === 'zh-CN');
  assert.equal(await page.locator(`${builder} tr[data-run]`).count(), 6);
  assert.match(await page.locator(`${builder} table[data-stats="enc-runs"] caption`).textContent(), /并排/);
  for (const width of [1366, 390]) {
    await page.setViewportSize({ width, height: 900 });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `zh ${width}: the page scrolls sideways by ${overflow} px`);
    await screenshot(page, `chapter10-zh-${width}`);
  }
  await page.setViewportSize({ width: 1360, height: 900 });
});

test('§10 in English at 1366 and 390 px, before training', async () => {
  for (const width of [1366, 390]) {
    await page.setViewportSize({ width, height: 900 });
    await open('en');
    for (let k = 1; k < 3; k++) await page.locator(`${builder} button[data-act="add"]`).click();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `en ${width}: the page scrolls sideways by ${overflow} px`);
    await screenshot(page, `chapter10-en-${width}`);
  }
  await page.setViewportSize({ width: 1360, height: 900 });
});

test('§10 no console errors', () => {
  // A request the tests' own navigation cut short (the next page.goto while a worker still loads) is not the page's.
  assert.deepEqual(b.problems.filter((p) => !/^request failed: .*\((net::ERR_ABORTED|NS_BINDING_ABORTED)\)$/.test(p)), []);
});
