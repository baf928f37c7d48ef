// The statistics the walkthrough computes in TypeScript (derive.ts: each row's entropy, the scores
// the histograms bin) agree with the engine's own diagnostics of the same layer
// (lab.attentionStats: AttentionStatsRecorder, what the Trainer reports per step).
//   node --test tests/browser/walk_stats.test.mjs
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadReferenceEngine, useWalkthroughPage } from './support.mjs';

const ctx = useWalkthroughPage({ isolation: true });

for (const mask of ['none', 'causal']) {
  test(`mask ${mask}: mean row entropy per head and the largest |scaled score| equal the engine’s`, async () => {
    const { page } = ctx;
    await page.selectOption('select[name="mask"]', mask);
    await page.fill('input[name="sentence"]', 'the bank raised the interest rate');
    await page.waitForFunction((m) => {
      const s = window.__attnlab.walk();
      return s.status === 'ready' && s.input.tokens.length === 6 && s.trace.request.causal === (m === 'causal');
    }, mask);
    await loadReferenceEngine(page);
    const r = await page.evaluate(async () => {
      const s = window.__attnlab.walk();
      const req = s.trace.request;
      const stats = window.__refLab.attentionStats({ dModel: req.dModel, numHeads: req.numHeads, numKvHeads: req.numKvHeads, seed: req.seed }, req.x, { causal: req.causal, scale: req.scale, positional: req.positional });
      const pageEntropy = s.derived.heads.map((h) => h.entropyScaled.reduce((a, b) => a + b, 0) / h.entropyScaled.length);
      const pageMax = Math.max(...s.derived.scoreValues.scaled.map(Math.abs));
      return { engine: { max: stats.maxAbsScore, entropy: Array.from(stats.meanEntropy.data) }, pageEntropy, pageMax, maskedMax: Math.max(...s.trace.stages.scaled.heads.flatMap((t) => Array.from(t.data, Math.abs))) };
    });
    assert.equal(r.pageEntropy.length, r.engine.entropy.length);
    r.pageEntropy.forEach((e, h) => assert.ok(Math.abs(e - r.engine.entropy[h]) < 1e-5, `head ${h}: page mean entropy ${e} vs engine ${r.engine.entropy[h]}`));
    // The engine's max covers every scaled score (masked keys included); so does the page's scaled stage.
    assert.equal(Math.fround(r.maskedMax), r.engine.max);
    assert.ok(r.pageMax <= r.engine.max);
  });
}
