// The walkthrough's cross-attention mode: a query sentence and a context sentence of different
// lengths; Q comes from the first, K and V from the second, every (T, S) stage has a row per query
// token and a column per context token, the K and V projections read the context, titles say where
// each stage comes from, and every number equals a separate engine's trace with `memory` (and its
// gradients, lab.attentionGradients with `memory`).
//   node --test tests/browser/walk_cross.test.mjs
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compareMatrix, readMatrix, screenshot, settle, useWalkthroughPage, loadReferenceEngine } from './support.mjs';

const ctx = useWalkthroughPage({ isolation: true });
const QUERY = 'I love you';
const CONTEXT = 'we sat on the river bank';

async function reference(page) {
  await loadReferenceEngine(page);
  return page.evaluate(async () => {
    const s = window.__attnlab.walk();
    const req = s.trace.request;
    const lab = window.__refLab;
    const mha = new lab.MultiHeadAttention({ dModel: req.dModel, numHeads: req.numHeads, numKvHeads: req.numKvHeads, bias: true, seed: req.seed });
    const tr = mha.trace(req.x, { memory: req.memory, scale: req.scale });
    const out = window.__dumpTrace(tr);
    tr.delete();
    const C = req.dModel;
    const g = lab.attentionGradients({ dModel: C, numHeads: req.numHeads, numKvHeads: req.numKvHeads, seed: req.seed }, req.x, { memory: req.memory, scale: req.scale, lossRow: s.trace.backward.lossRow, target: s.trace.backward.target });
    // Finite differences of the loss in the context's first embedding entries.
    const r = s.trace.backward.lossRow;
    const loss = (memory) => {
      const y = mha.forward(req.x, { memory, scale: req.scale }).data;
      let l = 0;
      for (let j = 0; j < C; j++) l += 0.5 * (y[r * C + j] - s.trace.backward.target.data[j]) ** 2;
      return l;
    };
    const fd = [];
    for (let k = 0; k < req.memory.data.length; k += 5) {
      const p = new Float32Array(req.memory.data), m = new Float32Array(req.memory.data);
      p[k] += 1e-2;
      m[k] -= 1e-2;
      fd.push([k, (loss({ shape: req.memory.shape, data: p }) - loss({ shape: req.memory.shape, data: m })) / 2e-2]);
    }
    mha.delete();
    return { stages: out, gradMemory: { shape: g.gradMemory.shape, data: Array.from(g.gradMemory.data) }, pageGradMemory: Array.from(s.trace.backward.gradMemory.data), fd, memoryShape: req.memory.shape, xShape: req.x.shape };
  });
}

test('a context sentence turns the layer into cross-attention: (T, S) stages, K and V from the context, the engine’s numbers', async () => {
  const { page } = ctx;
  await page.fill('input[name="sentence"]', QUERY);
  await page.fill('input[name="context"]', CONTEXT);
  await page.waitForFunction(() => {
    const s = window.__attnlab.walk();
    return s.status === 'ready' && s.input.context?.tokens.length === 6 && s.input.tokens.length === 3;
  });
  const ref = await reference(page);
  assert.deepEqual(ref.xShape, [3, 8]);
  assert.deepEqual(ref.memoryShape, [6, 8]);
  assert.deepEqual(ref.stages.weights[0].shape, [3, 6], 'weights are (T, S) = (3, 6)');
  assert.match(await page.locator('.cross-note').textContent(), /3 .*“I love you”.*6 .*“we sat on the river bank”/);
  assert.match(new URL(page.url()).searchParams.get('w.context'), /river bank/);

  const check = async (step, shown) => {
    await page.locator(`nav.steps button[data-step="${step}"]`).click();
    await settle(page);
    for (const [name, stage, head = 0] of shown) compareMatrix(assert, await readMatrix(page, name), ref.stages[stage][head], `step ${step + 1}: ${name}`);
  };
  await check(2, [['q-h', 'q'], ['k-h', 'k'], ['v-h', 'v']]);
  // K and V are projections of the context: its tokens label their rows, and the titles say so.
  const kRows = await page.$$eval('figure[data-matrix="k-h"] g.cell[data-j="0"]', (c) => c.length);
  assert.equal(kRows, 6);
  assert.match(await page.locator('figure[data-matrix="k-h"] figcaption').textContent(), /from the context/);
  assert.match(await page.locator('figure[data-matrix="q-h"] figcaption').textContent(), /from the query sentence/);
  assert.match(await page.locator('figure[data-matrix="proj-x-k"] figcaption').textContent(), /context/);
  await screenshot(page, 'walk-cross-projections');
  await check(3, [['scores', 'scores']]);
  assert.match(await page.locator('figure[data-matrix="scores-kT"] figcaption').textContent(), /from the context/);
  await check(6, [['weights', 'weights'], ['softmax-masked', 'masked']]);
  await screenshot(page, 'walk-cross-softmax');
  await check(7, [['context', 'context'], ['wsum-v', 'v']]);
  await check(10, [['output', 'output']]);

  // Backward: the context's gradient, equal to finite differences through MultiHeadAttention.forward.
  assert.deepEqual(ref.pageGradMemory, ref.gradMemory.data);
  for (const [k, fd] of ref.fd) assert.ok(Math.abs(ref.gradMemory.data[k] - fd) <= 2e-2 * (1 + Math.abs(fd)), `dMemory[${k}] = ${ref.gradMemory.data[k]} vs finite difference ${fd}`);
  await page.locator('nav.steps button[data-step="16"]').click();
  await settle(page);
  const cells = await readMatrix(page, 'grad-memory');
  assert.equal(cells.length, 6 * 8);
  for (const c of cells) assert.equal(Math.fround(c.value), ref.gradMemory.data[c.i * 8 + c.j]);
  await screenshot(page, 'walk-cross-backward');
});

test('a mask with a context sentence is refused in words, not run', async () => {
  const { page } = ctx;
  await page.selectOption('select[name="mask"]', 'causal');
  await page.waitForFunction(() => window.__attnlab.walk().status === 'error');
  await settle(page);  // the page draws a state change on the next frame
  assert.match(await page.locator('.walk .problems').textContent(), /Cross-attention here runs without a mask/);
  await page.selectOption('select[name="mask"]', 'none');
  await page.fill('input[name="context"]', '');
  await page.waitForFunction(() => window.__attnlab.walk().status === 'ready' && !window.__attnlab.walk().input.context);
});
