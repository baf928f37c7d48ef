// The KV cache step on a decoder trained in the lab: the model generates greedily after a typed
// prompt, and its layer decodes every token fed through the engine's cache (kvCacheSteps with the
// layer's trained weights and RoPE). The tokens equal the checkpoint's own Model.generate (loaded
// into a separate engine), each new token's weights equal row t of Model.attentionMaps of that
// sequence, the cache grows by 2·Hkv·D floats per token, and the page shows the engine's numbers.
//   node --test tests/browser/walk_kv_trained.test.mjs
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { readFileSync } from 'node:fs';
import { launch, readMatrix, screenshot, settle, waitForLabDone, waitForStill } from './support.mjs';

const STEPS = 40;
let b;
let page;
before(async () => {
  b = await launch({ isolation: false });
  page = await b.newPage(`?view=lab&task=reverse&length=4&vocab=6&layers=2&dModel=16&heads=4&kvHeads=2&positional=rope&norm=pre&scale=1&lr=0.003&batch=16&steps=${STEPS}&seed=3`);
  const info = await page.evaluate(() => window.__attnlab.ready);
  assert.ok(info.training, 'this build has the training bindings');
});
after(async () => {
  await b?.close();
});

test('step 18 on a lab-trained decoder: the cache grows row by row and each token’s weights are the model’s', async () => {
  await page.locator('.lab button[data-act="train"]').click();
  await waitForLabDone(page, 120000);
  const [download] = await Promise.all([page.waitForEvent('download'), page.locator('.lab button[data-act="save"]').click()]);
  const checkpoint = readFileSync(await download.path());

  await page.locator('nav.tabs button[data-view="walk"]').click();
  await page.waitForFunction(() => window.__attnlab.walk().status === 'ready', null, { timeout: 30000 });
  await page.locator('select[name="model"]').selectOption('trained');
  await page.locator('select[name="layer"]').selectOption('1');
  await page.locator('input[name="modelInput"]').fill('5 0 3 2 |');
  await page.waitForFunction(() => { const s = window.__attnlab.walk(); return s.status === 'ready' && s.trace?.model?.layer === 1 && s.trace.model.text === '5 0 3 2 |'; }, null, { timeout: 20000 });

  const s = await page.evaluate(() => {
    const s = window.__attnlab.walk();
    const kv = s.trace.kvCache;
    return {
      prompt: s.trace.model.tokens, generation: kv.generation, H: s.derived.H, Hkv: s.derived.Hkv, D: s.derived.D,
      full: kv.full.map((st) => ({ weights: st.weights.map((w) => Array.from(w.data)), cacheLength: st.cacheLength, cacheFloats: st.cacheFloats, cached: st.macsCached, recompute: st.macsRecompute })),
      linear: kv.linear.map((st) => st.cacheFloats),
    };
  });
  // The reference: the checkpoint's own greedy generation after the same prompt, and its maps.
  const { generated, maps } = await page.evaluate(async ({ bytes, prompt, n }) => {
    const { loadAttnLab } = await import(new URL('engine/loader.mjs', document.baseURI).href);
    const lab = await loadAttnLab({ flavour: 'single' });
    const model = lab.Model.load(Uint8Array.from(bytes));
    const generated = Array.from(model.generate(Int32Array.from(prompt), n, { temperature: 0 }));
    const m = model.attentionMaps(Int32Array.from(generated));
    model.delete();
    return { generated, maps: { shape: m.shape, data: Array.from(m.data) } };
  }, { bytes: Array.from(checkpoint), prompt: s.prompt, n: 4 });
  assert.equal(s.generation.prompt, 5);
  assert.deepEqual(s.generation.tokens, generated, 'the page generates what the model generates');
  assert.equal(generated.length, 9, 'the prompt and 4 generated tokens');
  const [, H, T] = maps.shape;
  assert.equal(s.H, H);
  assert.equal(s.Hkv, 2);
  assert.equal(s.full.length, T, 'one step per token');
  for (let t = 0; t < T; t++) {
    const st = s.full[t];
    assert.equal(st.cacheLength, t + 1);
    assert.equal(st.cacheFloats, 2 * s.Hkv * s.D * (t + 1), 'K and V rows of every token so far');
    assert.equal(s.linear[t], s.linear[0], 'linear attention’s state keeps its size');
    if (t > 0) assert.ok(st.cached < st.recompute);
    for (let h = 0; h < H; h++) {
      assert.equal(st.weights[h].length, t + 1);
      for (let j = 0; j <= t; j++) {
        const want = maps.data[((1 * H + h) * T + t) * T + j];
        assert.ok(Math.abs(st.weights[h][j] - want) <= 1e-5, `step ${t} head ${h} key ${j}: cache ${st.weights[h][j]} vs model ${want}`);
      }
    }
  }

  await page.locator('nav.steps button[data-step="17"]').click();
  await settle(page);
  assert.equal(await page.locator('.stage').getAttribute('data-stage'), 'kv-cache');
  const shown = await readMatrix(page, 'kv-weights');
  assert.equal(shown.length, T, 'at rest: the last token against all T cached keys');
  for (const c of shown) assert.equal(Math.fround(c.value), Math.fround(s.full[T - 1].weights[0][c.j]));
  const floats = await page.$$eval('.kv-table tbody tr', (trs) => trs.map((tr) => Number(tr.dataset.cacheFloats)));
  assert.deepEqual(floats, s.full.map((x) => x.cacheFloats), 'the table lists the cache growing row by row');
  const rows = await page.$$eval('figure[data-matrix="kv-k"] text', (ts) => ts.map((t) => t.textContent));
  assert.ok(rows.some((r) => r.startsWith('8 → ')), `the last cached row is a generated token (${rows})`);
  const explain = await page.locator('.explain').first().textContent();
  assert.match(explain, /layer 1 of the decoder you trained/);
  assert.match(explain, /the 4 marked → are the model’s own greedy continuation/);
  await waitForStill(page);
  await screenshot(page, 'walk-kv-trained');
});

test('no console errors or failed requests', () => {
  assert.deepEqual(b.problems, []);
});
