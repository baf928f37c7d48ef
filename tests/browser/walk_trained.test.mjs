// The walkthrough on a model trained in the lab: train the reverse task briefly, switch the
// walkthrough to "trained in the lab", and check that the weights it shows for a layer and head
// equal the engine's Model.attentionMaps of that model (its checkpoint loaded into a separate
// engine in the page), to the shown precision; the token labels are the task's own symbols.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { readFileSync } from 'node:fs';
import { cellText, launch, readMatrix, screenshot, settle, waitForLabDone } from './support.mjs';

const STEPS = 120;
let b;
let page;
before(async () => {
  b = await launch({ isolation: true });
  page = await b.newPage(`?view=lab&task=reverse&length=4&vocab=6&layers=2&dModel=32&heads=4&kvHeads=4&positional=rope&norm=pre&scale=1&lr=0.003&batch=32&steps=${STEPS}&seed=1`);
  const info = await page.evaluate(() => window.__attnlab.ready);
  assert.ok(info.training, 'this build has the training bindings');
});
after(async () => {
  await b?.close();
});

/** Model.attentionMaps of the lab's model (its downloaded checkpoint, in a separate single-threaded engine). */
async function engineMaps(checkpoint, tokens) {
  return page.evaluate(async ({ bytes, tokens }) => {
    if (!window.__refLab) {
      const { loadAttnLab } = await import(new URL('engine/loader.mjs', document.baseURI).href);
      window.__refLab = await loadAttnLab({ flavour: 'single' });
    }
    const model = window.__refLab.Model.load(Uint8Array.from(bytes));
    const maps = model.attentionMaps(Int32Array.from(tokens));
    model.delete();
    return { shape: maps.shape, data: Array.from(maps.data) };
  }, { bytes: Array.from(checkpoint), tokens });
}

async function waitForModelTrace(layer, text) {
  await page.waitForFunction(
    ({ layer, text }) => {
      const s = window.__attnlab.walk();
      return s.status === 'ready' && s.trace?.model?.layer === layer && (text === null || s.trace.model.text === text);
    },
    { layer, text },
    { timeout: 20000 },
  );
  await settle(page);
}

function compareWeights(cells, maps, layer, head, what) {
  const [, H, T, S] = maps.shape;
  assert.equal(cells.length, T * S, `${what}: ${cells.length} cells shown, engine has ${T}×${S}`);
  for (const c of cells) {
    const v = maps.data[((layer * H + head) * T + c.i) * S + c.j];
    assert.equal(c.text, cellText(v), `${what}[${c.i}][${c.j}] shows '${c.text}', engine ${v}`);
    assert.ok(Math.abs(c.value - v) <= 1e-6, `${what}[${c.i}][${c.j}] hover ${c.value} vs engine ${v}`);
    if (c.j > c.i) assert.equal(c.value, 0, 'causal: a later key has weight exactly 0');
  }
}

test('the walkthrough shows a layer of the model trained in the lab, equal to Model.attentionMaps', async () => {
  const model = page.locator('select[name="model"]');
  assert.equal(await page.locator('select[name="model"] option[value="trained"]').isDisabled(), true, 'no model yet');
  await page.locator('.lab button[data-act="train"]').click();
  await waitForLabDone(page, 120000);
  const [download] = await Promise.all([page.waitForEvent('download'), page.locator('.lab button[data-act="save"]').click()]);
  const checkpoint = readFileSync(await download.path());

  await page.locator('nav.tabs button[data-view="walk"]').click();
  await page.waitForFunction(() => window.__attnlab.walk().status === 'ready', null, { timeout: 30000 });
  assert.equal(await page.locator('select[name="model"] option[value="trained"]').isDisabled(), false);
  await model.selectOption('trained');
  await waitForModelTrace(0, null);

  // The lab's example input, labelled with the task's symbols (digits and the '|' separator).
  const s = await page.evaluate(() => { const s = window.__attnlab.walk(); return { m: s.trace.model, tokens: s.input.tokens, names: s.trace.stageNames, H: s.derived.H }; });
  assert.equal(s.m.kind, 'decoder');
  assert.equal(s.m.layers, 2);
  assert.deepEqual(s.tokens, s.m.labels);
  assert.ok(s.m.labels.includes('|'), `labels ${s.m.labels}`);
  assert.equal(s.H, 4);
  for (const n of ['x', 'q', 'k', 'v', 'scores', 'scaled', 'masked', 'weights', 'context', 'concat', 'output']) assert.ok(s.names.includes(n), n);

  await page.locator('nav.steps button[data-step="6"]').click(); // softmax: the weights
  await settle(page);
  let maps = await engineMaps(checkpoint, s.m.tokens);
  compareWeights(await readMatrix(page, 'weights'), maps, 0, 0, 'layer 0 head 0 weights');
  await screenshot(page, 'walk-trained');

  // The layer picker: layer 1, head 2.
  await page.locator('select[name="layer"]').selectOption('1');
  await waitForModelTrace(1, null);
  await page.locator('.head-picker button[data-head="2"]').click();
  await settle(page);
  compareWeights(await readMatrix(page, 'weights'), maps, 1, 2, 'layer 1 head 2 weights');

  // An input typed in the task's syntax.
  await page.locator('input[name="modelInput"]').fill('5 0 3 2 |');
  await waitForModelTrace(1, '5 0 3 2 |');
  const typed = await page.evaluate(() => window.__attnlab.walk().trace.model.tokens);
  assert.equal(typed.length, 5);
  maps = await engineMaps(checkpoint, typed);
  compareWeights(await readMatrix(page, 'weights'), maps, 1, 2, 'typed input, layer 1 head 2');

  // Back to random weights: today's walkthrough.
  await model.selectOption('random');
  await page.waitForFunction(() => { const s = window.__attnlab.walk(); return s.status === 'ready' && !s.trace.model; }, null, { timeout: 20000 });
});

test('no console errors or failed requests', () => {
  assert.deepEqual(b.problems, []);
});
