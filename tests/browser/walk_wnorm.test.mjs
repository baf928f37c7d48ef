// Weight × value size in the weighted-sum step (raw w_ij, ‖v_j‖ and their product, checked against
// the engine's weights and v), and GQA's shared K/V heads drawn as shared in the heads step.
//   node --test tests/browser/walk_wnorm.test.mjs
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { engineReference, readMatrix, screenshot, settle, useWalkthroughPage } from './support.mjs';

const ctx = useWalkthroughPage({ isolation: true });

test('the weighted-sum step shows w_ij, ‖v_j‖ and w_ij·‖v_j‖ of the engine’s weights and values', async () => {
  const { page } = ctx;
  const ref = await engineReference(page);
  await page.locator('nav.steps button[data-step="7"]').click();
  await settle(page);
  const i = 0;
  const w = ref.weights[0];
  const v = ref.v[0];
  const [S, D] = v.shape;
  const norms = Array.from({ length: S }, (_, j) => Math.fround(Math.hypot(...v.data.slice(j * D, (j + 1) * D))));
  const shownW = await readMatrix(page, 'wnorm-w');
  const shownN = await readMatrix(page, 'wnorm-norm');
  const shownP = await readMatrix(page, 'wnorm-prod');
  assert.equal(shownW.length, S);
  for (let j = 0; j < S; j++) {
    assert.equal(Math.fround(shownW[j].value), w.data[i * S + j], `w[${i}][${j}]`);
    assert.ok(Math.abs(shownN[j].value - norms[j]) <= 1e-6 * norms[j], `‖v_${j}‖ = ${shownN[j].value} vs ${norms[j]}`);
    assert.ok(Math.abs(shownP[j].value - w.data[i * S + j] * norms[j]) <= 1e-6 * (1 + norms[j]), `w·‖v‖ [${j}]`);
  }
  await screenshot(page, 'walk-weight-value-norm');
});

test('with 4 query heads on 2 K/V heads, the heads step draws each K/V head’s pair of query heads in one box', async () => {
  const { page } = ctx;
  await page.selectOption('select[name="heads"]', '4');
  await page.selectOption('select[name="kvHeads"]', '2');
  await page.waitForFunction(() => {
    const s = window.__attnlab.walk();
    return s.status === 'ready' && s.trace.request.numHeads === 4 && s.trace.request.numKvHeads === 2;
  });
  await page.locator('nav.steps button[data-step="8"]').click();
  await settle(page);
  const groups = await page.$$eval('.kv-group', (gs) => gs.map((g) => ({ kv: g.dataset.kvHead, heads: Array.from(g.querySelectorAll('figure[data-matrix^="heads-weights-h"]')).map((f) => f.dataset.matrix), label: g.querySelector('.kv-label').textContent })));
  assert.deepEqual(groups.map((g) => g.heads), [['heads-weights-h0', 'heads-weights-h1'], ['heads-weights-h2', 'heads-weights-h3']]);
  assert.match(groups[1].label, /K\/V head 1, shared by query heads 2, 3/);
  await screenshot(page, 'walk-gqa-shared');
});
