// The walkthrough on the cross-origin-isolated page: threaded engine, every shown stage equals
// the engine's (recomputed independently in the page), causal masking, keyboard stepping.
//   node --test tests/browser/
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { compareMatrix, engineReference, launch, readMatrix, screenshot, settle, waitForWalkthrough } from './support.mjs';

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

test('the page is cross-origin isolated and runs the threaded engine with 2 threads', async () => {
  const r = await page.evaluate(() => ({ iso: crossOriginIsolated, info: window.__attnlab.info, badge: document.querySelector('[data-engine-badge]').textContent }));
  assert.equal(r.iso, true);
  assert.equal(r.info.flavour, 'threads');
  assert.equal(r.info.threads, 2);
  assert.match(r.badge, /2 threads/);
});

// Which page matrices show which engine stage (head 0 unless the name says otherwise).
const SHOWN = {
  embeddings: [['x', 'x']],
  projections: [['q-h', 'q'], ['k-h', 'k'], ['v-h', 'v']],
  scores: [['scores', 'scores']],
  scaling: [['scaled', 'scaled'], ['scaling-scores', 'scores']],
  mask: [['masked', 'masked']],
  softmax: [['weights', 'weights'], ['softmax-masked', 'masked']],
  'weighted-sum': [['context', 'context'], ['wsum-weights', 'weights'], ['wsum-v', 'v']],
  heads: [['heads-weights-h0', 'weights', 0], ['heads-weights-h1', 'weights', 1]],
  concat: [['concat', 'concat']],
  output: [['output', 'output']],
};

test('stepping with → through all 11 steps shows the engine’s numbers at every stage', async () => {
  const ref = await engineReference(page);
  await page.locator('nav.steps button[data-step="0"]').click();
  await page.locator('.walk-main').click({ position: { x: 5, y: 5 } }); // focus off the form
  const seen = [];
  for (let k = 0; k < 11; k++) {
    await settle(page);
    const id = await page.locator('.stage').getAttribute('data-stage');
    seen.push(id);
    await page.waitForTimeout(450); // let transitions settle before the screenshot
    await screenshot(page, `walk-${String(k + 1).padStart(2, '0')}-${id}`);
    for (const [name, stage, head = 0] of SHOWN[id] ?? []) {
      compareMatrix(assert, await readMatrix(page, name), ref[stage][head], `${id}: ${name}`);
    }
    if (k < 10) {
      await page.keyboard.press('ArrowRight');
      await page.waitForFunction((n) => window.__attnlab.walk().step === n, k + 1);
    }
  }
  assert.deepEqual(seen, ['tokens', 'embeddings', 'projections', 'scores', 'scaling', 'mask', 'softmax', 'weighted-sum', 'heads', 'concat', 'output']);
  await page.keyboard.press('ArrowLeft');
  await page.waitForFunction(() => window.__attnlab.walk().step === 9);
});

test('hovering a score shows its exact value and the q·k products', async () => {
  await page.locator('nav.steps button[data-step="3"]').click();
  const cell = page.locator('figure[data-matrix="scores"] g.cell[data-i="1"][data-j="2"]');
  await cell.hover();
  const tip = page.locator('.tooltip');
  await assert.doesNotReject(tip.waitFor({ state: 'visible' }));
  const text = await tip.textContent();
  const value = await cell.getAttribute('data-value');
  assert.ok(text.includes(value), `tooltip '${text}' lacks the exact value ${value}`);
  assert.match(text, /q1·k2 =/);
  assert.equal(await page.locator('figure[data-matrix="scores-q"] g.cell.hi').count(), 4, 'row q_1 highlighted');
  await screenshot(page, 'walk-hover-score');
  await page.mouse.move(0, 0);
});

test('under a causal mask, masked cells are −∞ before softmax and exactly 0 after', async () => {
  await page.selectOption('select[name="mask"]', 'causal');
  await page.fill('input[name="sentence"]', 'the bank raised the interest rate');
  await page.waitForFunction(() => {
    const s = window.__attnlab.walk();
    return s.status === 'ready' && s.input.tokens.length === 6 && s.trace.request.causal;
  });
  const ref = await engineReference(page);
  await page.locator('nav.steps button[data-step="6"]').click();
  await page.waitForFunction(() => document.querySelector('.stage').dataset.stage === 'softmax');
  await settle(page);
  const weights = await readMatrix(page, 'weights');
  const masked = await readMatrix(page, 'softmax-masked');
  compareMatrix(assert, weights, ref.weights[0], 'causal weights');
  compareMatrix(assert, masked, ref.masked[0], 'causal masked');
  let count = 0;
  for (const c of weights) {
    if (c.j > c.i) {
      count++;
      assert.equal(ref.weights[0].data[c.i * 6 + c.j], 0, `engine weight [${c.i}][${c.j}] is exactly 0`);
      assert.equal(c.value, 0);
      assert.equal(c.text, '0.00');
      assert.ok(c.masked, `cell [${c.i}][${c.j}] is drawn as masked`);
    }
  }
  assert.equal(count, 15);
  for (const c of masked) if (c.j > c.i) assert.equal(c.text, '−∞');
  await screenshot(page, 'walk-causal-softmax');
});

test('sinusoidal positions and RoPE, GQA and padding: shown stages still equal the engine', async () => {
  for (const [positional, mask, heads, kv, stepId, checks] of [
    ['sinusoidal', 'padding', '2', '2', 1, [['x', 'x']]],
    ['rope', 'causal+padding', '4', '2', 3, [['scores', 'scores'], ['scores-q', 'q_rot']]],
  ]) {
    await page.selectOption('select[name="positional"]', positional);
    await page.selectOption('select[name="mask"]', mask);
    await page.selectOption('select[name="heads"]', heads);
    await page.selectOption('select[name="kvHeads"]', kv);
    await page.waitForFunction(
      ([p, h, k]) => {
        const s = window.__attnlab.walk();
        return s.status === 'ready' && s.trace.request.positional === p && s.trace.request.numHeads === h && s.trace.request.numKvHeads === k && s.trace.request.keyPaddingMask;
      },
      [positional, Number(heads), Number(kv)],
    );
    const ref = await engineReference(page);
    await page.locator(`nav.steps button[data-step="${stepId}"]`).click();
    await settle(page);
    await page.waitForTimeout(400);
    for (const [name, stage] of checks) compareMatrix(assert, await readMatrix(page, name), ref[stage][0], `${positional}: ${name}`);
    await screenshot(page, `walk-${positional}-${mask.replace('+', '-')}`);
  }
});

test('play advances through beats and steps; space pauses', async () => {
  await page.locator('nav.steps button[data-step="6"]').click();
  await page.selectOption('select[name="speed"]', '4');
  await page.locator('.walk-main').click({ position: { x: 5, y: 5 } });
  await page.keyboard.press(' ');
  // Playback moves on by its own timers while the test polls once a frame, and frames can be far
  // apart on a loaded machine, so each wait is for a state that holds once reached, never for one
  // passing beat: playback leaves a step only after playing its beats.
  const played = () => {
    const s = window.__attnlab.walk();
    return s.playing && (s.beat > 1 || s.step > 6);
  };
  await page.waitForFunction(played);
  // After its beats the step rests for its reading time at this speed (restMs, the page's own
  // schedule): the next step is due then, give or take the machine's load.
  const rest = await (await page.waitForFunction(() => {
    const s = window.__attnlab.walk();
    return s.step > 6 ? { ms: 0 } : s.beat === 0 && s.restMs > 0 ? { ms: s.restMs } : null;
  })).jsonValue();
  await page.waitForFunction(() => window.__attnlab.walk().step >= 7, null, { timeout: rest.ms + 15000 });
  await page.keyboard.press(' ');
  await page.waitForFunction(() => !window.__attnlab.walk().playing);
});

test('no console errors or failed requests', () => {
  assert.deepEqual(b.problems, []);
});
