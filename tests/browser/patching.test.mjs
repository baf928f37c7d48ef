// The Heads tab's patching section on the shipped models: choosing brown patches its first
// suggested pair at once, and the layers × heads and layers × positions heat-maps equal Model.patch
// of the same prompts computed by a second engine in the page; clicking a cell shows its numbers;
// prompts of different token lengths are refused in both languages, and an answer of several
// tokens too; tang's couplet pair; screenshots at 1366 and 390 px in both languages.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readMatrix, screenshot, settle, useWalkthroughPage } from './support.mjs';

const w = useWalkthroughPage({ isolation: true });

// The page's worker runs the threads flavour, the second engine the single one: a share divides by
// a difference of logits, so the last bits of the sums can differ a little more.
const close = (a, b) => Math.abs(a - b) <= 1e-4 * Math.max(1, Math.abs(b));

/** Model.patch of models/<name>.safetensors on two texts (cut as the walkthrough reads them, a begin token first) and two one-token answers, in a second engine. */
function enginePatch(name, pair) {
  return w.page.evaluate(async ({ name, pair }) => {
    if (!window.__refLab) {
      const { loadAttnLab } = await import(new URL('engine/loader.mjs', document.baseURI).href);
      window.__refLab = await loadAttnLab({ flavour: 'single' });
    }
    const model = window.__refLab.Model.load(new Uint8Array(await (await fetch(new URL(`models/${name}.safetensors`, document.baseURI))).arrayBuffer()));
    const tok = model.tokenizer();
    try {
      const begin = tok.beginId();
      const ids = (text) => Int32Array.from([...(begin === null ? [] : [begin]), ...tok.encode(text)]);
      const [answer] = tok.encode(pair.answer);
      const [wrong] = tok.encode(pair.wrong);
      const p = model.patch(ids(pair.clean), ids(pair.corrupted), { answer, wrong });
      return { cleanDiff: p.cleanDiff, corruptedDiff: p.corruptedDiff, heads: { shape: p.heads.shape, data: Array.from(p.heads.data) }, residual: { shape: p.residual.shape, data: Array.from(p.residual.data) } };
    } finally {
      tok.delete();
      model.delete();
    }
  }, { name, pair });
}

const section = () => w.page.locator('[data-section="patching"]');
const pairShown = () => section().evaluate((el) => Object.fromEntries(['clean', 'corrupted', 'answer', 'wrong'].map((f) => [f, el.querySelector(`input[name="patch-${f}"]`).value])));

async function openShippedInHeads(name) {
  await w.page.locator('nav.tabs button[data-view="walk"]').click();
  await w.page.locator(`.shipped-button[data-model="${name}"]`).click();
  await w.page.waitForFunction((file) => {
    const s = window.__attnlab.walk();
    return s.pretrained.phase === 'ready' && s.pretrained.info?.name === file && s.status === 'ready';
  }, `${name}.safetensors`, { timeout: 60000 });
  await w.page.locator('nav.tabs button[data-view="heads"]').click();
}

/** Waits until the section shows a result computed for the pair now in its fields. */
async function patched() {
  await w.page.waitForFunction(() => {
    const el = document.querySelector('[data-section="patching"]');
    return el?.dataset.status === 'ready' && el.querySelector('.patch-result')?.children.length > 0;
  }, null, { timeout: 60000 });
  await settle(w.page);
}

async function compareMaps(ref, what) {
  for (const [name, t] of [['patch-heads', ref.heads], ['patch-residual', ref.residual]]) {
    const cells = await readMatrix(w.page, name);
    const [R, K] = t.shape;
    assert.equal(cells.length, R * K, `${what}: ${name} has ${cells.length} cells, the engine ${R}×${K}`);
    for (const c of cells) assert.ok(close(c.value, t.data[c.i * K + c.j]), `${what}: ${name}[${c.i}][${c.j}] shown ${c.value}, engine ${t.data[c.i * K + c.j]}`);
  }
  const diffs = await section().locator('.patch-diffs').evaluate((e) => ({ clean: Number(e.dataset.clean), corrupted: Number(e.dataset.corrupted) }));
  assert.ok(close(diffs.clean, ref.cleanDiff) && close(diffs.corrupted, ref.corruptedDiff), `${what}: differences ${JSON.stringify(diffs)} vs ${ref.cleanDiff}, ${ref.corruptedDiff}`);
}

test('brown: its first pair is patched when it opens, and the heat-maps are the engine\'s', async () => {
  await openShippedInHeads('brown');
  await patched();
  const pair = await pairShown();
  assert.match(pair.clean, /war/);
  const ref = await enginePatch('brown', pair);
  assert.deepEqual(ref.heads.shape, [4, 4]);
  await compareMaps(ref, 'brown pair 1');
  assert.equal(await section().locator('.patch-close').count(), 0, `the differences ${ref.cleanDiff} and ${ref.corruptedDiff} are not close`);
  await screenshot(w.page, 'heads-patching-brown-1366');
});

test('a clicked cell shows its numbers', async () => {
  const ref = await enginePatch('brown', await pairShown());
  await section().locator('figure[data-matrix="patch-heads"] g.cell[data-i="3"][data-j="0"]').click();
  await w.page.waitForFunction(() => document.querySelector('.patch-picked[data-table="heads"][data-i="3"][data-j="0"]'));
  const picked = section().locator('.patch-picked');
  assert.ok(close(Number(await picked.getAttribute('data-share')), ref.heads.data[3 * 4 + 0]));
  assert.match(await picked.textContent(), /Layer 3, head 0: its output at every position patched/);
  assert.match(await picked.textContent(), /d_clean = /);
  await section().locator('figure[data-matrix="patch-residual"] g.cell[data-i="1"][data-j="2"]').click();
  await w.page.waitForFunction(() => document.querySelector('.patch-picked[data-table="residual"][data-i="1"][data-j="2"]'));
  assert.ok(close(Number(await section().locator('.patch-picked').getAttribute('data-share')), ref.residual.data[1 * ref.residual.shape[1] + 2]));
  assert.match(await section().locator('.patch-picked').textContent(), /residual entering block 1 at position 2/);
});

test('the second pair (who gets the drink) is the engine\'s too', async () => {
  await section().locator('button[data-pair="1"]').click();
  await w.page.waitForFunction(() => document.querySelector('input[name="patch-clean"]').value.startsWith('When the man'));
  await patched();
  const ref = await enginePatch('brown', await pairShown());
  await compareMaps(ref, 'brown pair 2');
  // This small model barely tells who gets the drink: the page says the shares divide by a small gap.
  assert.ok(Math.abs(ref.cleanDiff - ref.corruptedDiff) < 0.1, `differences ${ref.cleanDiff}, ${ref.corruptedDiff}`);
  assert.match(await section().locator('.patch-close').textContent(), /within 0\.1 of each other/);
});

test('prompts of different token lengths are refused, in English and in Chinese', async () => {
  const fill = async (pair) => {
    for (const [f, v] of Object.entries(pair)) await section().locator(`input[name="patch-${f}"]`).fill(v);
    await section().locator('form.patch-form button[type="submit"]').click();
  };
  // brown's BPE cuts " Mary" into two tokens and " John" into one.
  await fill({ clean: 'When Mary and John went to the store, John gave a drink to', corrupted: 'When Mary and John went to the store, Mary gave a drink to', answer: ' John', wrong: ' man' });
  await w.page.waitForFunction(() => document.querySelector('.patch-problem[data-problem="lengths"]'));
  assert.match(await section().locator('.patch-problem').textContent(), /The clean prompt is 17 tokens and the corrupted one 18: patching needs the same number of tokens/);
  assert.equal(await section().locator('figure[data-matrix="patch-heads"]').count(), 0, 'no table for prompts of different lengths');
  await w.page.locator('.lang-switch button[data-lang="zh"]').click();
  await w.page.waitForFunction(() => document.documentElement.lang.startsWith('zh'));
  await settle(w.page);
  assert.match(await section().locator('.patch-problem').textContent(), /干净提示有 17 个词元，损坏提示有 18 个/);
  assert.match(await section().locator('h3').textContent(), /激活修补/);
  await w.page.locator('.lang-switch button[data-lang="en"]').click();
  await w.page.waitForFunction(() => document.documentElement.lang === 'en');
  await fill({ clean: 'the war and the war and the', corrupted: 'the land and the land and the', answer: ' Mary', wrong: ' land' });
  await w.page.waitForFunction(() => document.querySelector('.patch-problem[data-problem="answer"]'));
  assert.match(await section().locator('.patch-problem').textContent(), /The answer token “␣Mary” is 2 tokens for this model/);
});

test('tang: a couplet pair differing in one character, in Chinese; screenshots', async () => {
  await openShippedInHeads('tang');
  await w.page.waitForFunction(() => document.querySelector('input[name="patch-clean"]').value.includes('山中一夜'));
  await patched();
  const pair = await pairShown();
  assert.equal([...pair.clean].length, [...pair.corrupted].length);
  assert.equal([...pair.clean].filter((ch, i) => ch !== [...pair.corrupted][i]).length, 1, 'one character differs');
  await compareMaps(await enginePatch('tang', pair), 'tang pair 1');
  await w.page.locator('.lang-switch button[data-lang="zh"]').click();
  await w.page.waitForFunction(() => document.documentElement.lang.startsWith('zh'));
  await settle(w.page);
  assert.match(await section().locator('.patch-diffs').textContent(), /干净/);
  await screenshot(w.page, 'heads-patching-tang-zh-1366');
  await w.page.setViewportSize({ width: 390, height: 900 });
  await settle(w.page);
  const overflow = await w.page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow} px`);
  await screenshot(w.page, 'heads-patching-tang-zh-390');
  await w.page.locator('.lang-switch button[data-lang="en"]').click();
  await settle(w.page);
  await screenshot(w.page, 'heads-patching-tang-en-390');
  await w.page.setViewportSize({ width: 1360, height: 900 });
});

test('no console errors or failed requests', () => {
  assert.deepEqual(w.b.problems, []);
});
