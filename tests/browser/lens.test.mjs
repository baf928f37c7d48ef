// The logit lens under the walkthrough's output step, on a shipped model (brown, then tang) and on a
// decoder trained in the lab: every row's top tokens and probabilities, the attributed token's
// probability per row and each head's direct logit attribution equal Model.logitLens (with
// probabilities) and Model.logitAttribution of the same file computed by a second engine in the
// page; choosing a position and clicking a token recompute them; the texts follow the language;
// screenshots at 1366 and 390 px in both languages.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { readMatrix, screenshot, settle, useWalkthroughPage, waitForLabDone } from './support.mjs';

const w = useWalkthroughPage({ isolation: true });
const OUTPUT_STEP = 10;

/** Model.logitLens (probabilities) and Model.logitAttribution of `bytes` (a checkpoint) or models/<name>.safetensors, in a second engine. */
function engineLens(source, tokens, position, token) {
  return w.page.evaluate(async ({ source, tokens, position, token }) => {
    if (!window.__refLab) {
      const { loadAttnLab } = await import(new URL('engine/loader.mjs', document.baseURI).href);
      window.__refLab = await loadAttnLab({ flavour: 'single' });
    }
    const bytes = source.bytes ? Uint8Array.from(source.bytes) : new Uint8Array(await (await fetch(new URL(`models/${source.name}.safetensors`, document.baseURI))).arrayBuffer());
    const model = window.__refLab.Model.load(bytes);
    try {
      const ids = Int32Array.from(tokens);
      const p = model.logitLens(ids, { position, probabilities: true });
      const V = p.shape[1];
      const top = token ?? (() => {
        const last = p.data.subarray((p.shape[0] - 1) * V);
        let best = 0;
        for (let i = 1; i < V; i++) if (last[i] > last[best]) best = i;
        return best;
      })();
      const a = model.logitAttribution(ids, { token: top, position });
      return { shape: p.shape, probs: Array.from(p.data), token: top, heads: { shape: a.heads.shape, data: Array.from(a.heads.data) }, attnBias: [...a.attnBias], mlp: [...a.mlp], embed: a.embed, lnBias: a.lnBias, logit: a.logit };
    } finally {
      model.delete();
    }
  }, { source, tokens, position, token });
}

/** Waits until the lens section shows the engine's result for `position`. */
async function lensShown(position) {
  await w.page.waitForFunction((position) => {
    const el = document.querySelector('[data-section="lens"]');
    return el?.dataset.status === 'ready' && Number(el.querySelector('table.lens-table')?.dataset.position) === position;
  }, position, { timeout: 60000 });
  await settle(w.page);
}

/** What the lens table shows: per row, its tokens' ids and probabilities (exact values), and the attributed token's probability. */
function readLens() {
  return w.page.$$eval('table.lens-table tbody tr', (rows) =>
    rows.map((r) => ({
      layer: Number(r.dataset.layer),
      top: [...r.querySelectorAll('button.lens-token')].map((b) => ({ id: Number(b.dataset.id), p: Number(b.dataset.p), text: b.querySelector('.tok').textContent })),
      tokenP: Number(r.querySelector('td.lens-p').dataset.p),
    })),
  );
}

// The page's worker runs the threads flavour, the second engine the single one: their sums may
// round differently in the last bits.
const close = (a, b) => Math.abs(a - b) <= 1e-5 * Math.max(1, Math.abs(b));

/** The shown lens against the engine's: the top ids in the engine's order, every probability and attribution equal to float rounding. */
async function compareLens(ref, what) {
  const [rows, V] = ref.shape;
  const shown = await readLens();
  assert.equal(shown.length, rows, `${what}: ${shown.length} rows, the engine has L + 1 = ${rows}`);
  for (const row of shown) {
    const p = ref.probs.slice(row.layer * V, (row.layer + 1) * V);
    const order = p.map((x, i) => i).sort((a, b) => p[b] - p[a] || a - b).slice(0, row.top.length);
    assert.deepEqual(row.top.map((x) => x.id), order, `${what}: row ${row.layer}'s top tokens`);
    for (const x of row.top) assert.ok(close(x.p, p[x.id]), `${what}: row ${row.layer} p[${x.id}] shown ${x.p}, engine ${p[x.id]}`);
    assert.ok(close(row.tokenP, p[ref.token]), `${what}: row ${row.layer} p(token ${ref.token}) shown ${row.tokenP}, engine ${p[ref.token]}`);
  }
  const [L, H] = ref.heads.shape;
  const cells = await readMatrix(w.page, 'lens-dla');
  assert.equal(cells.length, L * (H + 2), `${what}: attribution cells`);
  for (const c of cells) {
    const want = c.j < H ? ref.heads.data[c.i * H + c.j] : c.j === H ? ref.attnBias[c.i] : ref.mlp[c.i];
    assert.ok(close(c.value, want), `${what}: attribution [${c.i}][${c.j}] shown ${c.value}, engine ${want}`);
  }
  const parts = await w.page.locator('.lens-parts').evaluate((e) => ({ logit: Number(e.dataset.logit), embed: Number(e.dataset.embed), lnBias: Number(e.dataset.lnBias) }));
  for (const k of ['logit', 'embed', 'lnBias']) assert.ok(close(parts[k], ref[k]), `${what}: ${k} shown ${parts[k]}, engine ${ref[k]}`);
}

async function openShipped(name) {
  await w.page.locator(`.shipped-button[data-model="${name}"]`).click();
  await w.page.waitForFunction((file) => {
    const s = window.__attnlab.walk();
    return s.pretrained.phase === 'ready' && s.pretrained.info?.name === file && s.status === 'ready' && s.trace?.model?.pretrained;
  }, `${name}.safetensors`, { timeout: 60000 });
}

const tokensShown = () => w.page.evaluate(() => window.__attnlab.walk().trace.model.tokens);

test('random weights: the output step says the lens needs a trained decoder', async () => {
  await w.page.locator(`nav.steps button[data-step="${OUTPUT_STEP}"]`).click();
  await w.page.waitForFunction(() => document.querySelector('.stage')?.dataset.stage === 'output');
  await settle(w.page);
  assert.match(await w.page.locator('[data-section="lens"]').textContent(), /reads a whole trained decoder/);
  assert.equal(await w.page.locator('table.lens-table').count(), 0);
});

test('brown: the lens and the attribution at the last position are the engine\'s', async () => {
  await openShipped('brown');
  await w.page.locator(`nav.steps button[data-step="${OUTPUT_STEP}"]`).click();
  const tokens = await tokensShown();
  await lensShown(tokens.length - 1);
  const ref = await engineLens({ name: 'brown' }, tokens, tokens.length - 1, null);
  await compareLens(ref, 'brown, last position');
  const heading = await w.page.locator('[data-section="lens"] h4').textContent();
  assert.match(heading, /Direct logit attribution of/);
  await screenshot(w.page, 'walk-lens-brown-1366');
});

test('brown: another position, then a clicked token, recompute the lens and the attribution', async () => {
  const tokens = await tokensShown();
  await w.page.locator('select[name="lensPosition"]').selectOption('2');
  await lensShown(2);
  await compareLens(await engineLens({ name: 'brown' }, tokens, 2, null), 'brown, position 2');
  // The second-ranked token of the embedding row.
  const pick = w.page.locator('tbody tr[data-layer="0"] td:nth-child(3) button.lens-token');
  const id = Number(await pick.getAttribute('data-id'));
  await pick.click();
  await w.page.waitForFunction((id) => document.querySelector(`[data-section="lens"][data-status="ready"] button.lens-token.on[data-id="${id}"]`), id, { timeout: 60000 });
  await settle(w.page);
  await compareLens(await engineLens({ name: 'brown' }, tokens, 2, id), `brown, position 2, token ${id}`);
});

test('tang (a begin token first): the lens is the engine\'s, and reads in Chinese; screenshots', async () => {
  await openShipped('tang');
  await w.page.locator(`nav.steps button[data-step="${OUTPUT_STEP}"]`).click();
  const tokens = await tokensShown();
  await lensShown(tokens.length - 1);
  await compareLens(await engineLens({ name: 'tang' }, tokens, tokens.length - 1, null), 'tang');
  await w.page.locator('.lang-switch button[data-lang="zh"]').click();
  await w.page.waitForFunction(() => document.documentElement.lang.startsWith('zh'));
  await settle(w.page);
  const text = await w.page.locator('[data-section="lens"]').textContent();
  assert.match(text, /逻辑透镜/);
  assert.match(text, /直接 logit 归因/);
  assert.match(text, /第 0 块之后/);
  await screenshot(w.page, 'walk-lens-tang-zh-1366');
  await w.page.setViewportSize({ width: 390, height: 900 });
  await settle(w.page);
  const overflow = await w.page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow} px`);
  await screenshot(w.page, 'walk-lens-tang-zh-390');
  await w.page.locator('.lang-switch button[data-lang="en"]').click();
  await settle(w.page);
  await screenshot(w.page, 'walk-lens-tang-en-390');
  await w.page.setViewportSize({ width: 1360, height: 900 });
});

test('a decoder trained in the lab: the lens of its example input is the engine\'s', async () => {
  await w.page.goto(`${w.b.url}?view=lab&task=reverse&length=4&vocab=6&layers=2&dModel=32&heads=4&kvHeads=4&positional=rope&norm=pre&scale=1&lr=0.003&batch=32&steps=40&seed=1`);
  await w.page.evaluate(() => window.__attnlab.ready);
  await w.page.locator('.lab button[data-act="train"]').click();
  await waitForLabDone(w.page, 120000);
  const [download] = await Promise.all([w.page.waitForEvent('download'), w.page.locator('.lab button[data-act="save"]').click()]);
  const checkpoint = readFileSync(await download.path());
  await w.page.locator('nav.tabs button[data-view="walk"]').click();
  await w.page.waitForFunction(() => window.__attnlab.walk().status === 'ready', null, { timeout: 30000 });
  await w.page.locator('select[name="model"]').selectOption('trained');
  await w.page.waitForFunction(() => { const s = window.__attnlab.walk(); return s.status === 'ready' && s.trace?.model?.task === 'reverse'; }, null, { timeout: 30000 });
  await w.page.locator(`nav.steps button[data-step="${OUTPUT_STEP}"]`).click();
  const tokens = await tokensShown();
  await lensShown(tokens.length - 1);
  await compareLens(await engineLens({ bytes: Array.from(checkpoint) }, tokens, tokens.length - 1, null), 'lab reverse model');
});

test('no console errors or failed requests', () => {
  assert.deepEqual(w.b.problems, []);
});
