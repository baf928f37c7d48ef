// The walkthrough's sliding-window masks (causal + window 2, optionally 1 global token) and its
// settings in the URL (a link reopens the same walkthrough; bad values fall back to defaults).
//   node --test tests/browser/
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { launch, readMatrix, screenshot, settle, waitForWalkthrough } from './support.mjs';

const W = 2;
let b;
let page;
before(async () => {
  b = await launch({ isolation: true });
  page = await b.newPage('?view=walk');
  await waitForWalkthrough(page);
});
after(async () => {
  await b?.close();
});

/** Waits for a trace of `tokens` tokens under `mask`, then returns the engine's per-head stages from the store. */
async function traceFor(mask, tokens) {
  await page.waitForFunction(
    ([m, n]) => {
      const s = window.__attnlab.walk();
      return s.status === 'ready' && s.settings.mask === m && s.traced?.mask === m && s.input.tokens.length === n;
    },
    [mask, tokens],
  );
  return page.evaluate(() => {
    const s = window.__attnlab.walk();
    const heads = (name) => s.trace.stages[name].heads.map((t) => ({ shape: t.shape, data: Array.from(t.data, (v) => (v === -Infinity ? '-inf' : v)) }));
    return { request: { causal: s.trace.request.causal, window: s.trace.request.window, globalTokens: s.trace.request.globalTokens }, masked: heads('masked'), weights: heads('weights') };
  });
}

/** Checks every head's masked scores and weights against the band: visible iff j <= i, and i - j <= W or j < G. */
function checkBand(tr, T, G) {
  assert.ok(tr.weights.length >= 1);
  for (let h = 0; h < tr.weights.length; h++) {
    const w = tr.weights[h].data;
    const m = tr.masked[h].data;
    assert.deepEqual(tr.weights[h].shape, [T, T]);
    for (let i = 0; i < T; i++) {
      let sum = 0;
      for (let j = 0; j < T; j++) {
        const visible = j <= i && (i - j <= W || j < G);
        const v = w[i * T + j];
        if (visible) {
          assert.notEqual(m[i * T + j], '-inf', `head ${h}: masked[${i}][${j}] is inside the band`);
          assert.ok(v > 0, `head ${h}: weight[${i}][${j}] = ${v} inside the band`);
        } else {
          assert.equal(m[i * T + j], '-inf', `head ${h}: masked[${i}][${j}] is −∞ outside the band`);
          assert.equal(v, 0, `head ${h}: weight[${i}][${j}] is exactly 0 outside the band`);
        }
        sum += v;
      }
      assert.ok(Math.abs(sum - 1) < 1e-5, `head ${h}: row ${i} sums to ${sum}`);
    }
  }
}

test('causal + window 2: weights are exactly 0 more than 2 keys back, rows sum to 1, the page shows it', async () => {
  await page.fill('input[name="sentence"]', 'the bank raised the interest rate');
  await page.selectOption('select[name="mask"]', 'causal+window');
  const T = 6;
  const tr = await traceFor('causal+window', T);
  assert.deepEqual(tr.request, { causal: true, window: W, globalTokens: 0 });
  checkBand(tr, T, 0);

  // The mask stage: what the page draws is the engine's masked matrix, hatched exactly outside the band.
  await page.locator('nav.steps button[data-step="5"]').click();
  await page.waitForFunction(() => document.querySelector('.stage').dataset.stage === 'mask');
  await settle(page);
  await page.waitForTimeout(450);
  const explain = await page.locator('.explain').textContent();
  assert.match(explain, /sliding window/);
  assert.match(explain, /O\(T·W\) instead of O\(T²\)/);
  const masked = await readMatrix(page, 'masked');
  assert.equal(masked.length, T * T);
  for (const c of masked) {
    const outside = c.j > c.i || c.i - c.j > W;
    assert.equal(c.masked, outside, `masked[${c.i}][${c.j}] drawn ${c.masked ? 'hatched' : 'plain'}`);
    if (outside) assert.equal(c.text, '−∞');
  }
  await screenshot(page, 'walk-window-mask');

  // The softmax stage: the weights heat-map shows exact zeros outside the band.
  await page.locator('nav.steps button[data-step="6"]').click();
  await page.waitForFunction(() => document.querySelector('.stage').dataset.stage === 'softmax');
  await settle(page);
  for (const c of await readMatrix(page, 'weights')) {
    if (c.j > c.i || c.i - c.j > W) {
      assert.equal(c.value, 0, `shown weight[${c.i}][${c.j}]`);
      assert.equal(c.text, '0.00');
    }
  }
  await screenshot(page, 'walk-window-softmax');
});

test('causal + window 2 + 1 global token: every token also sees token 0', async () => {
  await page.selectOption('select[name="mask"]', 'causal+window+global');
  const tr = await traceFor('causal+window+global', 6);
  assert.deepEqual(tr.request, { causal: true, window: W, globalTokens: 1 });
  checkBand(tr, 6, 1);
  await page.locator('nav.steps button[data-step="5"]').click();
  await settle(page);
  assert.match(await page.locator('.explain').textContent(), /global/);
});

test('the other masks still work after choosing a window', async () => {
  for (const [mask, T, causal, padded] of [['none', 6, false, false], ['causal', 6, true, false], ['padding', 8, false, true], ['causal+padding', 8, true, true]]) {
    await page.selectOption('select[name="mask"]', mask);
    await traceFor(mask, T);
    const r = await page.evaluate(() => window.__attnlab.walk().trace.request);
    assert.equal(r.causal, causal, `${mask}: causal`);
    assert.equal(Boolean(r.keyPaddingMask), padded, `${mask}: padding`);
    assert.equal(r.window, 0, `${mask}: no window`);
    assert.equal(r.globalTokens, 0, `${mask}: no global tokens`);
  }
});

test('settings round-trip through the URL: change them, reopen the link, the same walkthrough', async () => {
  const set = {
    sentence: 'we sat on the river bank',
    dModel: '16',
    heads: '4',
    kvHeads: '2',
    positional: 'rope',
    mask: 'causal+window',
    seed: '42',
    speed: '2',
  };
  await page.fill('input[name="sentence"]', set.sentence);
  for (const k of ['dModel', 'heads', 'kvHeads', 'positional', 'mask', 'speed']) await page.selectOption(`select[name="${k}"]`, set[k]);
  await page.fill('input[name="seed"]', set.seed);
  await page.uncheck('input[name="scale"]');
  await page.waitForFunction(() => {
    const q = new URL(location.href).searchParams;
    return q.get('w.seed') === '42' && q.get('w.scale') === '0' && q.get('w.speed') === '2' && q.get('w.sentence') === 'we sat on the river bank';
  });
  await page.waitForFunction(() => window.__attnlab.walk().status === 'ready' && window.__attnlab.walk().trace.request.seed === 42);
  assert.equal(await page.locator('.walk .problems').textContent(), '', 'a valid set of settings');
  const link = page.url();
  const q = new URL(link).searchParams;
  for (const k of ['dModel', 'heads', 'kvHeads', 'positional', 'mask']) assert.equal(q.get(`w.${k}`), set[k], `URL w.${k}`);
  const before = await page.evaluate(() => {
    const s = window.__attnlab.walk();
    return { shapes: Object.fromEntries(Object.entries(s.trace.stages).map(([k, v]) => [k, [v.heads.length, ...v.heads[0].shape]])), weights: Array.from(s.trace.stages.weights.heads[1].data) };
  });

  await page.goto('about:blank');
  await page.goto(link);
  await waitForWalkthrough(page);
  const controls = await page.evaluate(() => {
    const f = document.querySelector('form.settings');
    const v = (n) => f.elements.namedItem(n).value;
    return { sentence: v('sentence'), dModel: v('dModel'), heads: v('heads'), kvHeads: v('kvHeads'), positional: v('positional'), mask: v('mask'), seed: v('seed'), speed: document.querySelector('select[name="speed"]').value, scale: f.elements.namedItem('scale').checked };
  });
  assert.deepEqual(controls, { ...set, scale: false });
  const after = await page.evaluate(() => {
    const s = window.__attnlab.walk();
    return { speed: s.speed, request: s.trace.request, shapes: Object.fromEntries(Object.entries(s.trace.stages).map(([k, v]) => [k, [v.heads.length, ...v.heads[0].shape]])), weights: Array.from(s.trace.stages.weights.heads[1].data) };
  });
  assert.equal(after.speed, 2);
  assert.equal(after.request.seed, 42);
  assert.equal(after.request.scale, false);
  assert.equal(after.request.window, W);
  assert.deepEqual(after.shapes, before.shapes);
  assert.deepEqual(after.shapes.q, [4, 6, 4], 'q: 4 heads of (T = 6, D = 4)');
  assert.deepEqual(after.shapes.k, [2, 6, 4], 'k: 2 K/V heads');
  assert.deepEqual(after.weights, before.weights, 'the same engine numbers after reopening the link');
});

test('invalid values in the URL fall back to defaults without errors', async () => {
  await page.goto('about:blank');
  await page.goto(`${b.url}?view=walk&w.dModel=7&w.heads=banana&w.kvHeads=16&w.positional=alibi&w.mask=everything&w.seed=-3&w.scale=maybe&w.speed=100&w.sentence=${encodeURIComponent('   ')}`);
  await waitForWalkthrough(page);
  const s = await page.evaluate(() => ({ settings: window.__attnlab.walk().settings, speed: window.__attnlab.walk().speed, problems: document.querySelector('.walk .problems').textContent }));
  assert.deepEqual(
    { sentence: s.settings.sentence, dModel: s.settings.dModel, heads: s.settings.heads, kvHeads: s.settings.kvHeads, positional: s.settings.positional, mask: s.settings.mask, seed: s.settings.seed, scale: s.settings.scale, speed: s.speed },
    { sentence: 'I love you', dModel: 8, heads: 2, kvHeads: 2, positional: 'none', mask: 'none', seed: 1, scale: true, speed: 1 },
  );
  assert.equal(s.problems, '');

  // Values valid one by one that do not fit together (d_model 6, 4 heads): the architecture falls back.
  await page.goto('about:blank');
  await page.goto(`${b.url}?view=walk&w.dModel=6&w.heads=4&w.kvHeads=4&w.mask=causal&w.seed=7`);
  await waitForWalkthrough(page);
  const t = await page.evaluate(() => window.__attnlab.walk().trace.request);
  assert.deepEqual([t.dModel, t.numHeads, t.numKvHeads, t.causal, t.seed], [8, 2, 2, true, 7]);
});

test('no console errors or failed requests', () => {
  assert.deepEqual(b.problems, []);
});
