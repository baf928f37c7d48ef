// The walkthrough at its edges: Chinese and emoji input, errors in place of the stage, nothing cut
// or changed without a word, a reading pace and a player in reach, labels and numbers that fit, the
// keyboard, a phone's first screen; and the step and head in the URL.
//   node --test tests/browser/walkthrough_edges.test.mjs
import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { compareMatrix, engineReference, readMatrix, screenshot, settle, useWalkthroughPage, waitForStill, waitForWalkthrough } from './support.mjs';

const ctx = useWalkthroughPage({ isolation: true });
let page;
let b;
beforeEach(() => {
  ({ page, b } = ctx);
});

/** Opens the walkthrough (?view=walk) at `query` (a fresh load) and waits for its trace. */
async function open(query = '', viewport = { width: 1366, height: 900 }) {
  await page.setViewportSize(viewport);
  await page.goto('about:blank');
  const url = new URL(`${b.url}${query}`);
  url.searchParams.set('view', 'walk');
  await page.goto(url.href);
  await waitForWalkthrough(page);
}

/** Types `sentence` and waits for the trace of it. */
async function sentence(text) {
  await page.fill('input[name="sentence"]', text);
  await page.waitForFunction((t) => {
    const s = window.__attnlab.walk();
    return s.settings.sentence === t && s.status !== 'computing' && (s.status === 'error' || s.traced?.sentence === t);
  }, text);
  await settle(page);
}

const step = async (n) => {
  await page.locator(`nav.steps button[data-step="${n}"]`).click();
  await page.waitForFunction((k) => window.__attnlab.walk().step === k, n);
  await settle(page);
};

test('Chinese is read one character per token, an emoji with its selector is one token, and the permutation point holds in Chinese', async () => {
  await open();
  await sentence('我爱你');
  let s = await page.evaluate(() => ({ tokens: window.__attnlab.walk().input.tokens, x: window.__attnlab.walk().trace.stages.x.heads[0].shape }));
  assert.deepEqual(s.tokens, ['我', '爱', '你']);
  assert.deepEqual(s.x, [3, 8], 'x is (T = 3, C = 8), not 1 × 1');
  await step(0);
  await page.waitForTimeout(400);
  assert.deepEqual(await page.locator('.chip .w').allTextContents(), ['我', '爱', '你']);
  await screenshot(page, 'walkthrough-chinese-tokens');

  await sentence('I ❤️ you 👩‍👩‍👧!');
  s = await page.evaluate(() => window.__attnlab.walk().input.tokens);
  assert.deepEqual(s, ['I', '❤️', 'you', '👩‍👩‍👧', '!']);
  for (const t of await page.locator('.chip .w').allTextContents()) assert.notEqual(t.trim(), '', 'no empty chip');

  // The examples offer the Chinese pair; without positions its output rows are a permutation.
  const labels = await page.locator('select[name="example"] option').allTextContents();
  assert.ok(labels.some((l) => l.startsWith('我爱你')) && labels.some((l) => l.startsWith('你爱我')), `examples: ${labels}`);
  const outputOf = async (label) => {
    const i = labels.indexOf(labels.find((l) => l.startsWith(label))) - 1;
    await page.selectOption('select[name="example"]', String(i));
    await page.waitForFunction((t) => window.__attnlab.walk().status === 'ready' && window.__attnlab.walk().traced?.sentence === t, label);
    return page.evaluate(() => {
      const o = window.__attnlab.walk().trace.stages.output.heads[0];
      return { tokens: window.__attnlab.walk().input.tokens, rows: Array.from({ length: o.shape[0] }, (_, i) => Array.from(o.data.slice(i * o.shape[1], (i + 1) * o.shape[1]))) };
    });
  };
  const a = await outputOf('我爱你');
  const bb = await outputOf('你爱我');
  for (const [i, t] of a.tokens.entries()) {
    const ok = bb.rows[bb.tokens.indexOf(t)].every((v, k) => Math.abs(v - a.rows[i][k]) < 1e-5);
    assert.ok(ok, `the output row of “${t}” is the same numbers in both orders`);
  }
  await step(10);
  const explain = await page.locator('.explain').textContent();
  assert.match(explain, /“我爱你”/);
  assert.match(explain, /“你爱我”/);
  await step(6);
  await page.waitForTimeout(450);
  await screenshot(page, 'walkthrough-chinese-softmax');
});

test('an error replaces the stage (no stale picture), and impossible heads / K/V heads are disabled with a reason', async () => {
  await open();
  await step(3);
  await sentence('');
  assert.equal(await page.locator('.stage-error').isVisible(), true, 'the error is shown where the stage was');
  assert.match(await page.locator('.stage-error').textContent(), /sentence is empty/);
  assert.equal(await page.locator('.stage').isVisible(), false, 'the previous trace is not shown under an error');
  assert.equal(await page.locator('.walk-main figure.matrix:visible').count(), 0);
  await screenshot(page, 'walkthrough-error');
  await sentence('the cat sat');
  assert.equal(await page.locator('.stage-error').isVisible(), false);
  assert.ok((await readMatrix(page, 'scores')).length === 9);

  await page.selectOption('select[name="dModel"]', '6');
  const heads = await page.$$eval('.walk select[name="heads"] option', (os) => os.map((o) => ({ v: o.value, disabled: o.disabled, title: o.title })));
  for (const o of heads) {
    assert.equal(o.disabled, 6 % Number(o.v) !== 0, `heads ${o.v} with d_model 6`);
    if (o.disabled) assert.match(o.title, /d_model 6 does not split evenly/);
  }
  assert.match(await page.locator('.walk select[name="heads"]').getAttribute('title'), /4: d_model 6/);
  await page.selectOption('select[name="dModel"]', '8');
  await page.selectOption('select[name="heads"]', '2');
  const kv = await page.$$eval('.walk select[name="kvHeads"] option', (os) => os.map((o) => ({ v: o.value, disabled: o.disabled, title: o.title })));
  assert.deepEqual(kv.map((o) => o.disabled), [false, false, true, true], 'K/V heads 4 and 8 cannot serve 2 query heads');
  assert.match(kv[2].title, /more key\/value heads \(4\) than query heads \(2\)/);
  // RoPE needs an even head width: d_model 6 with 2 heads (d_k = 3) disables it.
  await page.selectOption('select[name="dModel"]', '6');
  const rope = await page.$eval('.walk select[name="positional"] option[value="rope"]', (o) => ({ disabled: o.disabled, title: o.title }));
  assert.equal(rope.disabled, true);
  assert.match(rope.title, /d_k = 6 \/ 2 = 3 must be even/);
});

test('cut input is reported, a bad seed is refused in words (not changed), and a bad link value is reported and corrected in the address bar', async () => {
  await open();
  const long = Array.from({ length: 30 }, (_, i) => String.fromCharCode(97 + (i % 26))).join(' ');
  await sentence(long);
  assert.equal(await page.evaluate(() => window.__attnlab.walk().input.tokens.length), 10);
  assert.match(await page.locator('.notices').textContent(), /30 tokens; the walkthrough uses the first 10 and drops 20/);
  await sentence('a'.repeat(100));
  assert.equal(await page.inputValue('input[name="sentence"]'), 'a'.repeat(100), 'the field keeps what was typed');
  assert.match(await page.locator('.notices').textContent(), /100 characters; only the first 80 are read/);
  await sentence('I love you');
  assert.equal(await page.locator('.notices').textContent(), '');

  for (const bad of ['-5', '1.5', '100000']) {
    await page.fill('input[name="seed"]', bad);
    await page.waitForFunction(() => window.__attnlab.walk().status === 'error');
    await settle(page);
    assert.match(await page.locator('.stage-error').textContent(), new RegExp(`seed must be a whole number from 0 to 99999 \\(it is ${bad.replace('.', '\\.')}\\)`));
    assert.equal(await page.inputValue('input[name="seed"]'), bad, 'the seed field is not changed behind the reader’s back');
  }
  // The address bar holds the form's value; reopening it reports the value and corrects the bar.
  await page.waitForFunction(() => new URL(location.href).searchParams.get('w.seed') === '100000');
  await page.goto('about:blank');
  await page.goto(`${b.url}?view=walk&w.seed=100000&w.sentence=the+cat`);
  await waitForWalkthrough(page);
  assert.match(await page.locator('.notices').textContent(), /w\.seed=“100000” is not a whole number from 0 to 99999; using 1/);
  assert.equal(await page.inputValue('input[name="seed"]'), '1');
  await page.waitForFunction(() => new URL(location.href).searchParams.get('w.seed') === '1');
  assert.equal(new URL(page.url()).searchParams.get('w.sentence'), 'the cat');
  await screenshot(page, 'walkthrough-link-notice');
});

test('step and head in the URL: a link reopens the same step and head; a bad one is reported', async () => {
  await open('?w.heads=4&w.kvHeads=4&w.step=4&w.head=3');
  await settle(page);
  let s = await page.evaluate(() => ({ step: window.__attnlab.walk().step, head: window.__attnlab.walk().head }));
  assert.deepEqual(s, { step: 3, head: 3 });
  assert.equal(await page.locator('.stage').getAttribute('data-stage'), 'scores');
  assert.equal(await page.locator('.head-picker button.on').textContent(), '3');
  await page.locator('.head-picker button[data-head="1"]').click();
  await step(6);
  await page.waitForFunction(() => {
    const q = new URL(location.href).searchParams;
    return q.get('w.step') === '7' && q.get('w.head') === '1';
  });
  await open('?w.step=99&w.head=7');
  s = await page.evaluate(() => ({ step: window.__attnlab.walk().step, head: window.__attnlab.walk().head }));
  assert.deepEqual(s, { step: 0, head: 0 });
  const notices = await page.locator('.notices').textContent();
  assert.match(notices, /w\.step=“99” is not a step from 1 to 18/);
  assert.match(notices, /w\.head=“7” is not a head of 2/);
  await page.waitForFunction(() => new URL(location.href).searchParams.get('w.step') === '1');
});

test('play rests on a step long enough to read it, and the player stays in reach while reading', async () => {
  await open('', { width: 1366, height: 700 });
  await step(0);
  await page.locator('button.play').click();
  await page.waitForFunction(() => window.__attnlab.walk().playing);
  await page.waitForTimeout(6000);
  const s = await page.evaluate(() => ({ step: window.__attnlab.walk().step, restMs: window.__attnlab.walk().restMs }));
  assert.equal(s.step, 0, 'after 6 s at 1× the first step is still being read');
  assert.ok(s.restMs >= 15000, `the rest (${s.restMs} ms) fits the explanation`);
  assert.equal(await page.locator('.rest.on').count(), 1, 'the time left to read is shown');
  assert.match(await page.locator('.beat-caption').textContent(), /\d+ s to read this step, then the next one/);
  await page.locator('button.play').click();
  await page.waitForFunction(() => !window.__attnlab.walk().playing);
  // Scrolled down to the end of a long step's explanation, the player is still on screen.
  await step(2);
  await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
  const explain = await page.locator('.explain').boundingBox();
  assert.ok(explain.y + explain.height <= 700, 'the explanation’s end is on screen');
  const box = await page.locator('button.play').boundingBox();
  assert.ok(box.y >= 0 && box.y + box.height <= 700, `the Play button is on screen (y = ${box.y})`);
  await screenshot(page, 'walkthrough-reading');
});

/** Pairs of boxes of `selector` inside the stage that overlap (text that runs together). */
async function overlaps(selector) {
  return page.$$eval(selector, (els) => {
    const boxes = els.map((e) => ({ t: e.textContent, r: e.getBoundingClientRect() }));
    const out = [];
    for (let a = 0; a < boxes.length; a++)
      for (let c = a + 1; c < boxes.length; c++) {
        const [p, q] = [boxes[a].r, boxes[c].r];
        if (p.left < q.right - 1 && q.left < p.right - 1 && p.top < q.bottom - 1 && q.top < p.bottom - 1) out.push(`${boxes[a].t} / ${boxes[c].t}`);
      }
    return out;
  });
}

/** Cells of the stage whose printed number is wider than the cell. */
async function overflowingNumbers() {
  return page.$$eval('.stage g.cell', (cells) =>
    cells
      .filter((c) => {
        const t = c.querySelector('text');
        const w = Number(c.querySelector('rect').getAttribute('width'));
        return t.textContent && t.getComputedTextLength() > w - 2;
      })
      .map((c) => `${c.closest('figure').dataset.matrix}[${c.dataset.i}][${c.dataset.j}] ${c.querySelector('text').textContent}`),
  );
}

test('titles, labels and numbers fit at the edges; scaling off shows the engine’s would-be scaled scores', async () => {
  await open();
  await step(9);
  await waitForStill(page);
  const pic = await page.$eval('[data-section="concat-pic"] svg', (svg) => ({ w: svg.getBoundingClientRect().right, texts: Array.from(svg.querySelectorAll('text'), (t) => t.getBoundingClientRect().right) }));
  for (const r of pic.texts) assert.ok(r <= pic.w + 0.5, `a caption of the concat picture ends at ${r}, past the picture (${pic.w})`);
  assert.deepEqual(await overlaps('[data-section="concat-pic"] text'), []);
  await screenshot(page, 'walkthrough-concat');

  await step(10);
  await waitForStill(page);
  assert.equal(await page.locator('figure[data-matrix="out-w"] text.clabel').count(), 8, 'W_Oᵀ has column labels');
  assert.deepEqual(await overflowingNumbers(), []);
  await screenshot(page, 'walkthrough-output');

  // A very long word: its labels stay clear of the softmax arrow.
  await sentence('the supercalifragilisticexpialidocious cat');
  await step(6);
  await waitForStill(page);
  const clear = await page.evaluate(() => {
    const op = document.querySelector('.op[data-op="arrow"]').getBoundingClientRect();
    const labels = Array.from(document.querySelectorAll('figure[data-matrix="softmax-masked"] text'), (t) => t.getBoundingClientRect());
    return labels.filter((r) => r.right > op.left && r.bottom > op.top && r.top < op.bottom).length;
  });
  assert.equal(clear, 0, 'no label of the masked scores runs into “softmax →”');
  await screenshot(page, 'walkthrough-long-word');

  // d_model 64: numbers that cannot fit are not printed, and the figure says how to read them.
  await sentence('I love you');
  await page.selectOption('select[name="dModel"]', '64');
  await page.waitForFunction(() => window.__attnlab.walk().traced?.dModel === 64 && window.__attnlab.walk().status === 'ready');
  await step(1);
  assert.deepEqual(await overflowingNumbers(), []);
  assert.match(await page.locator('figure[data-matrix="x"] figcaption').textContent(), /too small for numbers: hover, tap or Tab to a cell/);

  // Scaling off: the engine's scores with scaling on (same weights) stand beside the unscaled pair.
  await page.selectOption('select[name="dModel"]', '8');
  await page.uncheck('input[name="scale"]');
  await page.waitForFunction(() => window.__attnlab.walk().traced?.scale === false && window.__attnlab.walk().status === 'ready');
  await step(4);
  await waitForStill(page);
  const ref = await engineReference(page, { scale: true });
  compareMatrix(assert, await readMatrix(page, 'scaled-would-be'), ref.scaled[0], 'would-be scaled');
  const off = await engineReference(page);
  compareMatrix(assert, await readMatrix(page, 'scaled'), off.scaled[0], 'scaled (off)');
  const entropyCols = await page.locator('figure[data-matrix="entropy"] text.clabel').allTextContents();
  assert.deepEqual(entropyCols, ['unscaled', 'scaled if on']);
  await screenshot(page, 'walkthrough-scaling-off');
});

test('Space presses the focused control, matrix cells take focus and show their value, Play is an early Tab stop', async () => {
  await open();
  await page.evaluate(() => document.activeElement?.blur());
  let stops = 0;
  for (; stops < 12; stops++) {
    await page.keyboard.press('Tab');
    if (await page.evaluate(() => document.activeElement?.matches('button.play'))) break;
  }
  assert.ok(stops < 6, `Play is Tab stop ${stops + 1}`);

  // Space on a focused step button goes to that step; it does not start playback.
  await page.locator('nav.steps button[data-step="3"]').focus();
  await page.keyboard.press(' ');
  await page.waitForFunction(() => window.__attnlab.walk().step === 3);
  assert.equal(await page.evaluate(() => window.__attnlab.walk().playing), false);
  // Space on the focused Play button plays once (not twice: pressed and toggled).
  await page.locator('button.play').focus();
  await page.keyboard.press(' ');
  await page.waitForFunction(() => window.__attnlab.walk().playing);
  await page.keyboard.press(' ');
  await page.waitForFunction(() => !window.__attnlab.walk().playing);

  // A matrix cell: Tab reaches it, focus shows its exact value, arrows move within the matrix.
  await page.locator('figure[data-matrix="scores"] g.cell[data-i="0"][data-j="0"]').focus();
  const tip = page.locator('.tooltip');
  await page.waitForFunction(() => document.querySelector('.tooltip')?.style.opacity === '1');
  const v00 = await page.locator('figure[data-matrix="scores"] g.cell[data-i="0"][data-j="0"]').getAttribute('data-value');
  assert.ok((await tip.textContent()).includes(v00));
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowDown');
  const focused = await page.evaluate(() => [document.activeElement.dataset.i, document.activeElement.dataset.j, document.activeElement.getAttribute('tabindex')]);
  assert.deepEqual(focused, ['1', '1', '0']);
  const v11 = await page.locator('figure[data-matrix="scores"] g.cell[data-i="1"][data-j="1"]').getAttribute('data-value');
  assert.ok((await tip.textContent()).includes(v11), 'the tooltip follows the focused cell');
  assert.match(await tip.textContent(), /q1·k1 =/);
  assert.equal(await page.evaluate(() => window.__attnlab.walk().step), 3, 'arrows on a cell do not change the step');
  assert.equal(await page.locator('figure[data-matrix="scores"] g.cell[tabindex="0"]').count(), 1, 'one Tab stop per matrix');
  await screenshot(page, 'walkthrough-keyboard-cell');
  await page.keyboard.press('Escape');
  await page.waitForFunction(() => document.querySelector('.tooltip')?.style.opacity === '0');
});

test('on a phone the stage is on the first screen, and a tapped tooltip goes away with a tab switch', async () => {
  await open('', { width: 390, height: 844 });
  await step(3);
  await page.evaluate(() => window.scrollTo(0, 0));
  const top = await page.locator('.stage').evaluate((e) => e.getBoundingClientRect().top);
  assert.ok(top < 420, `the stage starts ${top} px down`);
  // scrollWidth against clientWidth: the viewport less a vertical scrollbar, which Firefox draws.
  const wide = await page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]);
  assert.equal(wide[0], wide[1], 'no sideways scrolling');
  // Each matrix takes its own line on a phone, so its cells are sized to print their numbers.
  for (const c of await readMatrix(page, 'scores')) assert.notEqual(c.text, '', `scores[${c.i}][${c.j}] printed`);
  assert.deepEqual(await overflowingNumbers(), []);
  await screenshot(page, 'walkthrough-phone');

  // A tooltip left open by a tap (no pointer leaves a touch screen: here the mouse simply stays on
  // the cell) must not outlive the view: switch tabs without moving the pointer.
  await page.locator('figure[data-matrix="scores"] g.cell[data-i="1"][data-j="1"]').hover();
  await page.waitForFunction(() => document.querySelector('.tooltip')?.style.opacity === '1');
  await page.locator('nav.tabs button[data-view="lab"]').focus();
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => !document.getElementById('view-lab').hidden);
  await settle(page);
  assert.notEqual(await page.evaluate(() => document.querySelector('.tooltip').style.opacity), '1', 'the tooltip is gone after the tab switch');
});

test('no console errors or failed requests', () => {
  assert.deepEqual(b.problems, []);
});
