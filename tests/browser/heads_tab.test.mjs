// The Heads tab on a shipped model: opened from the tab itself (the walkthrough shows random
// weights, which the tab says it cannot read), every head of `tang` is shown with its map and a
// badge per detector score, each equal to Model.headScores of a separate engine in the page; the
// sort orders the cards by a score; switching a head off shows the loss, the top next tokens and
// the greedy continuation of Model.ablate (the separate engine's, token by token); clicking a head
// opens the walkthrough on that layer and head; brown's gallery too, and on random tokens repeated
// (lab.randomRepeat); both languages, 1366 and 390 px.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { launch, screenshot, settle } from './support.mjs';

let b;
let page;
before(async () => {
  b = await launch({ isolation: true });
  page = await b.newPage('?view=heads');
  await page.evaluate(() => window.__attnlab.ready);
});
after(async () => {
  await b?.close();
});

const TOL = 1e-5;

/** Loads models/<name>.safetensors into a separate single-thread engine in the page, once per name. */
const REF_SETUP = `async (name) => {
  if (!window.__refLab) {
    const { loadAttnLab } = await import(new URL('engine/loader.mjs', document.baseURI).href);
    window.__refLab = await loadAttnLab({ flavour: 'single' });
    window.__refModels = {};
  }
  if (!window.__refModels[name]) {
    const bytes = new Uint8Array(await (await fetch(new URL('models/' + name + '.safetensors', document.baseURI))).arrayBuffer());
    window.__refModels[name] = window.__refLab.Model.load(bytes);
  }
  return window.__refModels[name];
}`;

/** The separate engine's ids of `text` (a begin token first when the tokenizer has one) and Model.headScores of them. */
function reference(name, text) {
  return page.evaluate(async ({ setup, name, text }) => {
    const model = await (0, eval)(setup)(name);
    const tok = model.tokenizer();
    try {
      const begin = tok.beginId();
      const ids = [...(begin === null ? [] : [begin]), ...Array.from(tok.encode(text))];
      const c = model.config();
      return { ids, layers: c.numLayers, heads: c.numHeads, scores: model.headScores(Int32Array.from(ids)) };
    } finally {
      tok.delete();
    }
  }, { setup: REF_SETUP, name, text });
}

/**
 * Model.ablate of the separate engine for one head: loss, top-k and the greedy continuation (each
 * next token the most probable of the ablated distribution on the sequence so far), and the clean
 * model's (Model.generate).
 */
function referenceAblation(name, ids, head, method, k, n) {
  return page.evaluate(async ({ setup, name, ids, head, method, k, n }) => {
    const model = await (0, eval)(setup)(name);
    const top = (p) => Array.from(p.data.keys()).sort((a, b) => p.data[b] - p.data[a] || a - b).slice(0, k).map((id) => ({ id, p: p.data[id] }));
    const argmax = (p) => p.data.reduce((best, v, i, a) => (v > a[best] ? i : best), 0);
    const a = model.ablate(Int32Array.from(ids), { heads: [head], method });
    const seq = [...ids];
    for (let i = 0; i < n; ++i) seq.push(argmax(i === 0 ? a.probsAblated : model.ablate(Int32Array.from(seq), { heads: [head], method }).probsAblated));
    const clean = Array.from(model.generate(Int32Array.from(ids), n, { temperature: 0 })).slice(ids.length);
    return { lossClean: a.lossClean, lossAblated: a.lossAblated, klLast: a.klLast, topClean: top(a.probsClean), topAblated: top(a.probsAblated), continuation: seq.slice(ids.length), clean };
  }, { setup: REF_SETUP, name, ids, head, method, k, n });
}

/** Waits until the tab shows the gallery of `file`, and the ablation panel has its first numbers. */
async function galleryOf(file) {
  await page.waitForFunction((file) => {
    const s = window.__attnlab.heads();
    return s.status === 'ready' && s.gallery?.name === file && s.ablationStatus === 'ready';
  }, file, { timeout: 90000 });
  await settle(page);
}

/** Every card as shown: layer, head, and each badge's score key and value (null: no score). */
const cards = () =>
  page.$$eval('ul.gallery .head-card', (cs) =>
    cs.map((c) => ({
      layer: Number(c.dataset.layer),
      head: Number(c.dataset.head),
      badges: Object.fromEntries([...c.querySelectorAll('.badge')].map((x) => [x.dataset.score, x.dataset.value === '' ? null : Number(x.dataset.value)])),
      text: c.textContent,
    })),
  );

function assertBadgesAre(shown, ref) {
  assert.equal(shown.length, ref.layers * ref.heads, 'one card per head');
  const keys = Object.keys(ref.scores[0]).filter((k) => k !== 'layer' && k !== 'head');
  for (const s of ref.scores) {
    const c = shown.find((x) => x.layer === s.layer && x.head === s.head);
    assert.ok(c, `head ${s.layer}.${s.head} is shown`);
    assert.deepEqual(Object.keys(c.badges), keys, 'a badge for every score the engine returns');
    for (const k of keys) {
      if (s[k] === null) assert.equal(c.badges[k], null, `${s.layer}.${s.head} ${k}`);
      else assert.ok(Math.abs(c.badges[k] - s[k]) <= TOL, `${s.layer}.${s.head} ${k}: shown ${c.badges[k]}, engine ${s[k]}`);
    }
  }
}

test('on random weights the tab says it needs a language model and offers the shipped ones', async () => {
  await page.waitForFunction(() => document.querySelector('.heads-random')?.hidden === false);
  assert.match(await page.locator('.heads-random').textContent(), /not a language model/);
  assert.equal(await page.locator('.heads-random [data-shipped]').count(), 2);
  assert.equal(await page.locator('nav.tabs button[data-view="heads"]').getAttribute('aria-selected'), 'true');
});

test('tang: every head is shown, its badges equal the engine\'s headScores', async () => {
  await page.locator('.heads-random [data-shipped="tang"]').click();
  await galleryOf('tang.safetensors');
  const g = await page.evaluate(() => window.__attnlab.heads().gallery);
  const text = await page.evaluate(() => window.__attnlab.walk().settings.pretrainedText);
  const ref = await reference('tang', text);
  assert.deepEqual(g.tokens, ref.ids, 'the walkthrough\'s text, as the model\'s tokenizer reads it');
  const shown = await cards();
  assertBadgesAre(shown, ref);
  assert.equal(await page.locator('ul.gallery canvas.head-map').count(), ref.layers * ref.heads, 'a map per head');
  assert.match(shown[0].text, /previous token \d\.\d\d/);
  await screenshot(page, 'heads-tang-1366');
});

test('sorting by a score orders the heads by it, highest first', async () => {
  await page.locator('select[name="sort"]').selectOption('previous_token');
  await settle(page);
  const vals = (await cards()).map((c) => c.badges.previous_token);
  assert.ok(vals.every((v, i) => i === 0 || v <= vals[i - 1]), `descending: ${vals.join(' ')}`);
  await page.locator('select[name="sort"]').selectOption('layer');
  await settle(page);
  const order = (await cards()).map((c) => `${c.layer}.${c.head}`);
  const ref = await page.evaluate(() => window.__attnlab.heads().gallery.scores.map((s) => `${s.layer}.${s.head}`));
  assert.deepEqual(order, ref, 'back in the model\'s order');
});

test('switching a head off: loss, top-k and continuation change, equal to Model.ablate', async () => {
  const g = await page.evaluate(() => window.__attnlab.heads().gallery);
  const { topK, generate } = await page.evaluate(() => {
    const a = window.__attnlab.heads().ablation;
    return { topK: a.clean.top.length, generate: a.clean.continuation.length };
  });
  // The first head whose ablation changes the greedy continuation (the separate engine decides).
  let pick = null;
  for (let l = 0; l < g.layers && !pick; ++l)
    for (let h = 0; h < g.heads && !pick; ++h) {
      const r = await referenceAblation('tang', g.tokens, [l, h], 'zero', topK, generate);
      if (r.continuation.join() !== r.clean.join()) pick = { l, h, r };
    }
  assert.ok(pick, 'some head of tang changes the continuation when switched off');
  const { l, h, r } = pick;
  await page.locator(`.head-card[data-layer="${l}"][data-head="${h}"] input[data-act="off"]`).check();
  await page.waitForFunction((k) => {
    const s = window.__attnlab.heads();
    return s.ablationStatus === 'ready' && s.ablation?.heads.map((x) => x.join('.')).join() === k;
  }, `${l}.${h}`, { timeout: 60000 });
  await settle(page);
  const num = (sel) => page.locator(sel).getAttribute('data-value').then(Number);
  const lossClean = await num('.abl-col[data-side="clean"] .loss b');
  const lossAblated = await num('.abl-col[data-side="ablated"] .loss b');
  assert.ok(Math.abs(lossClean - r.lossClean) <= TOL * Math.max(1, r.lossClean), `clean loss ${lossClean} vs ${r.lossClean}`);
  assert.ok(Math.abs(lossAblated - r.lossAblated) <= TOL * Math.max(1, r.lossAblated), `ablated loss ${lossAblated} vs ${r.lossAblated}`);
  assert.notEqual(lossAblated, lossClean, 'the loss changes');
  const top = (side) => page.$$eval(`ol.top[data-side="${side}"] li`, (ls) => ls.map((x) => ({ id: Number(x.dataset.id), p: Number(x.dataset.p) })));
  for (const [side, want] of [['clean', r.topClean], ['ablated', r.topAblated]]) {
    const shown = await top(side);
    assert.deepEqual(shown.map((x) => x.id), want.map((x) => x.id), `${side} top-${topK} ids`);
    shown.forEach((x, i) => assert.ok(Math.abs(x.p - want[i].p) <= TOL, `${side} p[${i}] ${x.p} vs ${want[i].p}`));
  }
  assert.notDeepEqual((await top('ablated')).map((x) => x.p), (await top('clean')).map((x) => x.p), 'the next-token probabilities change');
  const ids = (side) => page.locator(`.continuation[data-side="${side}"]`).getAttribute('data-ids').then((s) => s.split(',').map(Number));
  assert.deepEqual(await ids('clean'), r.clean, 'the clean continuation is Model.generate\'s');
  assert.deepEqual(await ids('ablated'), r.continuation, 'the ablated continuation is greedy on Model.ablate');
  assert.notDeepEqual(await ids('ablated'), await ids('clean'), 'the continuation changes');
  assert.ok(await page.locator(`.head-card[data-layer="${l}"][data-head="${h}"]`).evaluate((c) => c.classList.contains('off')));
  await screenshot(page, 'heads-ablated-1366');
  // Back on: the panel shows the clean model alone.
  await page.locator('.abl button[data-act="all-on"]').click();
  await page.waitForFunction(() => window.__attnlab.heads().ablation?.ablated === null && window.__attnlab.heads().ablationStatus === 'ready');
});

test('clicking a head opens the walkthrough on that layer and head', async () => {
  const g = await page.evaluate(() => window.__attnlab.heads().gallery);
  const l = g.layers - 1, h = g.heads - 1;
  await page.locator(`.head-card[data-layer="${l}"][data-head="${h}"] button[data-act="open"]`).click();
  await page.waitForFunction(({ l, h }) => {
    const s = window.__attnlab.walk();
    return !document.getElementById('view-walk').hidden && s.status === 'ready' && s.trace?.model?.layer === l && s.head === h;
  }, { l, h }, { timeout: 60000 });
  await settle(page);
  assert.equal(await page.locator('.stage').getAttribute('data-stage'), 'softmax');
  assert.equal(await page.locator('.head-picker button[data-head="' + h + '"]').getAttribute('aria-pressed'), 'true');
  await page.locator('nav.tabs button[data-view="heads"]').click();
  await settle(page);
});

test('brown: its gallery\'s badges equal the engine\'s headScores', async () => {
  await page.locator('nav.tabs button[data-view="walk"]').click();
  await page.locator('.shipped-button[data-model="brown"]').click();
  await page.locator('nav.tabs button[data-view="heads"]').click();
  await galleryOf('brown.safetensors');
  const text = await page.evaluate(() => window.__attnlab.walk().settings.pretrainedText);
  const ref = await reference('brown', text);
  assert.deepEqual(await page.evaluate(() => window.__attnlab.heads().gallery.tokens), ref.ids);
  assertBadgesAre(await cards(), ref);
});

test('random tokens repeated: the ids are lab.randomRepeat\'s, the badges the engine\'s, induction scored', async () => {
  await page.locator('select[name="reading"]').selectOption('repeat');
  await page.waitForFunction(() => {
    const s = window.__attnlab.heads();
    return s.status === 'ready' && s.gallery?.repeat > 0 && s.ablationStatus === 'ready';
  }, null, { timeout: 90000 });
  await settle(page);
  const g = await page.evaluate(() => window.__attnlab.heads().gallery);
  const ref = await page.evaluate(async ({ setup, n }) => {
    const model = await (0, eval)(setup)('brown');
    const c = model.config();
    const ids = Array.from(window.__refLab.randomRepeat(n, c.vocabSize, 1));
    return { ids, layers: c.numLayers, heads: c.numHeads, scores: model.headScores(Int32Array.from(ids)) };
  }, { setup: REF_SETUP, n: g.repeat });
  assert.equal(g.repeat, 20);
  assert.deepEqual(g.tokens, ref.ids, 'lab.randomRepeat(20, vocabulary, 1)');
  assertBadgesAre(await cards(), ref);
  assert.ok(ref.scores.every((s) => s.induction !== null), 'the second half has an induction score');
  assert.match(await page.locator('.heads-model').textContent(), /20 random tokens, then the same 20 again/);
  await screenshot(page, 'heads-repeat-1366');
});

test('in Chinese, and at 390 px without scrolling sideways', async () => {
  await page.locator('.lang-switch button[data-lang="zh"]').click();
  await page.waitForFunction(() => document.documentElement.lang.startsWith('zh'));
  await settle(page);
  assert.equal(await page.locator('nav.tabs button[data-view="heads"]').textContent(), '注意力头');
  assert.match(await page.locator('.heads-head h2').textContent(), /[\u4e00-\u9fff]/);
  assert.match(await page.locator('ul.gallery .head-card').first().textContent(), /前一个词元/);
  assert.match(await page.locator('.heads-ablation h3').textContent(), /关掉/);
  await screenshot(page, 'heads-zh-1366');
  await page.setViewportSize({ width: 390, height: 900 });
  await settle(page);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow} px`);
  await screenshot(page, 'heads-zh-390');
  await page.locator('.lang-switch button[data-lang="en"]').click();
  await settle(page);
  await screenshot(page, 'heads-en-390');
  await page.setViewportSize({ width: 1360, height: 900 });
});

test('no console errors or failed requests', () => {
  assert.deepEqual(b.problems, []);
});
