// Generation with a KV cache: the new token's weights at each step equal row t of a separate
// engine's causal trace, the cache grows by 2·Hkv·D floats per token while linear attention's state
// stays one size, each cached step costs less than recomputing, and the page shows these numbers.
//   node --test tests/browser/walk_kv.test.mjs
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readMatrix, screenshot, settle, useWalkthroughPage, loadReferenceEngine } from './support.mjs';

const ctx = useWalkthroughPage({ isolation: true });

test('the KV cache step: weights per token equal the causal trace, cache sizes and costs are the engine’s', async () => {
  const { page } = ctx;
  await page.fill('input[name="sentence"]', 'the bank raised the interest rate');
  await page.waitForFunction(() => window.__attnlab.walk().status === 'ready' && window.__attnlab.walk().input.tokens.length === 6);
  await loadReferenceEngine(page);
  const r = await page.evaluate(async () => {
    const s = window.__attnlab.walk();
    const req = s.trace.request;
    const lab = window.__refLab;
    const mha = new lab.MultiHeadAttention({ dModel: req.dModel, numHeads: req.numHeads, numKvHeads: req.numKvHeads, bias: true, seed: req.seed });
    const tr = mha.trace(s.trace.stages.x.heads[0], { causal: true, stages: ['weights'] });
    const causal = Array.from({ length: req.numHeads }, (_, h) => Array.from(tr.stage('weights', h).data));
    tr.delete();
    mha.delete();
    const kv = s.trace.kvCache;
    return {
      H: req.numHeads, Hkv: req.numKvHeads, D: req.dModel / req.numHeads, T: req.x.shape[0], causal,
      full: kv.full.map((st) => ({ weights: st.weights.map((w) => Array.from(w.data)), cacheFloats: st.cacheFloats, cacheLength: st.cacheLength, cached: st.macsCached, recompute: st.macsRecompute })),
      linear: kv.linear.map((st) => ({ cacheFloats: st.cacheFloats, weights: st.weights.length })),
    };
  });
  const { H, Hkv, D, T } = r;
  assert.equal(r.full.length, T);
  for (let t = 0; t < T; t++) {
    const st = r.full[t];
    assert.equal(st.cacheLength, t + 1);
    assert.equal(st.cacheFloats, 2 * Hkv * D * (t + 1), 'K and V rows of every token so far');
    assert.equal(r.linear[t].cacheFloats, r.linear[0].cacheFloats, 'linear attention’s state keeps its size');
    assert.equal(r.linear[t].weights, 0);
    if (t > 0) assert.ok(st.cached < st.recompute, `step ${t}: cached ${st.cached} < recompute ${st.recompute}`);
    for (let h = 0; h < H; h++) {
      for (let j = 0; j <= t; j++) {
        const want = r.causal[h][t * T + j];
        assert.ok(Math.abs(st.weights[h][j] - want) <= 1e-6, `step ${t} head ${h} key ${j}: ${st.weights[h][j]} vs causal trace ${want}`);
      }
    }
  }
  await page.locator('nav.steps button[data-step="17"]').click();
  await settle(page);
  assert.equal(await page.locator('.stage').getAttribute('data-stage'), 'kv-cache');
  const shown = await readMatrix(page, 'kv-weights');
  assert.equal(shown.length, T, 'at rest: the last token against all T cached keys');
  for (const c of shown) assert.equal(Math.fround(c.value), Math.fround(r.full[T - 1].weights[0][c.j]));
  const rows = await page.$$eval('.kv-table tbody tr', (trs) => trs.map((tr) => ({ cached: Number(tr.dataset.cached), recompute: Number(tr.dataset.recompute), floats: Number(tr.dataset.cacheFloats) })));
  assert.deepEqual(rows.map((x) => x.recompute), r.full.map((x) => x.recompute));
  assert.deepEqual(rows.map((x) => x.floats), r.full.map((x) => x.cacheFloats));
  await screenshot(page, 'walk-kv-cache');
});
