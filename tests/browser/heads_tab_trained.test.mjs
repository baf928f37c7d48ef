// The Heads tab on a decoder trained in the lab: train the reverse task briefly, choose "trained in
// the lab" in the walkthrough, and the tab shows every head of that model on the lab's example,
// its badges equal to Model.headScores and one switched-off head's loss equal to Model.ablate of
// the model's checkpoint loaded into a separate engine in the page; a typed input is read as the
// walkthrough reads it.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { launch, settle, waitForLabDone } from './support.mjs';

const TOL = 1e-5;
let b;
let page;
let checkpoint;
before(async () => {
  b = await launch({ isolation: true });
  page = await b.newPage('?view=lab&task=reverse&length=4&vocab=6&layers=2&dModel=32&heads=4&kvHeads=4&positional=rope&norm=pre&scale=1&lr=0.003&batch=32&steps=60&seed=1');
  const info = await page.evaluate(() => window.__attnlab.ready);
  assert.ok(info.training, 'this build has the training bindings');
});
after(async () => {
  await b?.close();
});

/** Model.headScores and Model.ablate (head [1, 2], zero) of the checkpoint on `tokens`, in a separate engine. */
function reference(tokens) {
  return page.evaluate(async ({ bytes, tokens }) => {
    if (!window.__refLab) {
      const { loadAttnLab } = await import(new URL('engine/loader.mjs', document.baseURI).href);
      window.__refLab = await loadAttnLab({ flavour: 'single' });
    }
    const model = window.__refLab.Model.load(Uint8Array.from(bytes));
    try {
      const ids = Int32Array.from(tokens);
      const a = model.ablate(ids, { heads: [[1, 2]] });
      return { scores: model.headScores(ids), lossClean: a.lossClean, lossAblated: a.lossAblated };
    } finally {
      model.delete();
    }
  }, { bytes: Array.from(checkpoint), tokens });
}

async function galleryOn(tokensLength) {
  await page.waitForFunction((n) => {
    const s = window.__attnlab.heads();
    return s.status === 'ready' && s.gallery?.name === 'reverse' && (n === null || s.gallery.tokens.length === n) && s.ablationStatus === 'ready';
  }, tokensLength, { timeout: 60000 });
  await settle(page);
}

async function assertBadges(tokens) {
  const ref = await reference(tokens);
  const shown = await page.$$eval('ul.gallery .head-card', (cs) => cs.map((c) => ({ layer: Number(c.dataset.layer), head: Number(c.dataset.head),
    badges: Object.fromEntries([...c.querySelectorAll('.badge')].map((x) => [x.dataset.score, x.dataset.value === '' ? null : Number(x.dataset.value)])) })));
  assert.equal(shown.length, 2 * 4, 'every head of the 2 × 4 model');
  for (const s of ref.scores) {
    const c = shown.find((x) => x.layer === s.layer && x.head === s.head);
    for (const [k, v] of Object.entries(s)) {
      if (k === 'layer' || k === 'head') continue;
      if (v === null) assert.equal(c.badges[k], null, `${s.layer}.${s.head} ${k}`);
      else assert.ok(Math.abs(c.badges[k] - v) <= TOL, `${s.layer}.${s.head} ${k}: shown ${c.badges[k]}, engine ${v}`);
    }
  }
  return ref;
}

test('the lab\'s decoder: every head, its badges and a switched-off head equal the engine\'s', async () => {
  await page.locator('.lab button[data-act="train"]').click();
  await waitForLabDone(page, 120000);
  const [download] = await Promise.all([page.waitForEvent('download'), page.locator('.lab button[data-act="save"]').click()]);
  checkpoint = readFileSync(await download.path());

  await page.locator('nav.tabs button[data-view="walk"]').click();
  await page.waitForFunction(() => window.__attnlab.walk().status === 'ready', null, { timeout: 30000 });
  await page.locator('select[name="model"]').selectOption('trained');
  await page.waitForFunction(() => window.__attnlab.walk().trace?.model?.task === 'reverse', null, { timeout: 30000 });
  const walked = await page.evaluate(() => window.__attnlab.walk().trace.model.tokens);

  await page.locator('nav.tabs button[data-view="heads"]').click();
  await galleryOn(null);
  assert.deepEqual(await page.evaluate(() => window.__attnlab.heads().gallery.tokens), walked, 'the walkthrough\'s tokens');
  const ref = await assertBadges(walked);

  await page.locator('.head-card[data-layer="1"][data-head="2"] input[data-act="off"]').check();
  await page.waitForFunction(() => window.__attnlab.heads().ablation?.heads.map((x) => x.join('.')).join() === '1.2', null, { timeout: 30000 });
  await settle(page);
  const shown = Number(await page.locator('.abl-col[data-side="ablated"] .loss b').getAttribute('data-value'));
  assert.ok(Math.abs(shown - ref.lossAblated) <= TOL * Math.max(1, ref.lossAblated), `ablated loss ${shown} vs ${ref.lossAblated}`);
  const clean = Number(await page.locator('.abl-col[data-side="clean"] .loss b').getAttribute('data-value'));
  assert.ok(Math.abs(clean - ref.lossClean) <= TOL * Math.max(1, ref.lossClean), `clean loss ${clean} vs ${ref.lossClean}`);
});

test('an input typed in the walkthrough is the one the tab reads', async () => {
  await page.locator('nav.tabs button[data-view="walk"]').click();
  await page.locator('input[name="modelInput"]').fill('5 0 3 2 |');
  await page.waitForFunction(() => window.__attnlab.walk().trace?.model?.text === '5 0 3 2 |', null, { timeout: 30000 });
  await page.locator('nav.tabs button[data-view="heads"]').click();
  await galleryOn(5);
  const tokens = await page.evaluate(() => window.__attnlab.heads().gallery.tokens);
  assert.deepEqual(tokens, await page.evaluate(() => window.__attnlab.walk().trace.model.tokens));
  await assertBadges(tokens);
  assert.ok(await page.locator('.head-card[data-layer="1"][data-head="2"]').evaluate((c) => c.classList.contains('off')), 'a head stays off on a new text of the same model');
});

test('no console errors or failed requests', () => {
  assert.deepEqual(b.problems, []);
});
