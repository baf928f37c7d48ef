// The walkthrough on a real checkpoint: "Open a model…" picks a tiny GPT-2 in Hugging Face's layout
// (tests/reference/fixtures/gpt2/vocab_gpt2: GPT-2's vocabulary, read with the tokenizer bundled
// with the page), the reader types a sentence and steps through one head's stages; every matrix
// shown equals the engine's Model.trace of the same checkpoint loaded into a separate engine in
// the page, the weights sum to 1 per row, generation equals Model.generate, and a truncated file
// is refused with a named error in both languages.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cellText, launch, readMatrix, repoRoot, screenshot, settle, waitForWalkthrough } from './support.mjs';

const FIXTURE = join(repoRoot, 'tests', 'reference', 'fixtures', 'gpt2', 'vocab_gpt2');
const weights = readFileSync(join(FIXTURE, 'model.safetensors'));
const config = readFileSync(join(FIXTURE, 'config.json'));
const SENTENCE = 'Hello world, this is';
const IDS = [15496, 995, 11, 428, 318]; // gpt-3-encoder's encode(SENTENCE)

let b;
let page;
before(async () => {
  b = await launch({ isolation: true });
  page = await b.newPage('?view=walk');
  await waitForWalkthrough(page);
});
after(async () => {
  await b?.close();
});

const files = (bytes = weights) => [
  { name: 'model.safetensors', mimeType: 'application/octet-stream', buffer: bytes },
  { name: 'config.json', mimeType: 'application/json', buffer: config },
];

/** Model.trace (layer 0, every stage per head) and Model.generate of the fixture, in a separate single-threaded engine. */
async function engineReference(ids, generate) {
  return page.evaluate(async ({ bytes, config, ids, generate }) => {
    if (!window.__refLab) {
      const { loadAttnLab } = await import(new URL('engine/loader.mjs', document.baseURI).href);
      window.__refLab = await loadAttnLab({ flavour: 'single' });
    }
    const lab = window.__refLab;
    const model = await lab.loadPretrained({ weights: Uint8Array.from(atob(bytes), (c) => c.charCodeAt(0)), config });
    try {
      const tr = model.trace(Int32Array.from(ids), { layer: 0 });
      const out = { stages: {}, generated: Array.from(model.generate(Int32Array.from(ids), generate, { temperature: 0 })) };
      for (const name of tr.stageNames()) {
        const perHead = !['x', 'concat', 'output'].includes(name);
        out.stages[name] = [];
        for (let h = 0; h < (perHead ? tr.numHeads(name) : 1); h++) {
          const t = perHead ? tr.stage(name, h) : tr.stage(name);
          out.stages[name].push({ shape: t.shape, data: Array.from(t.data) });
        }
      }
      tr.delete();
      return out;
    } finally {
      model.delete();
    }
  }, { bytes: weights.toString('base64'), config: config.toString('utf8'), ids, generate });
}

/** The page shows exactly the engine's tensor: each cell's text to 2 decimals, its hover value to float precision. */
function compare(cells, tensor, what) {
  const [R, K] = tensor.shape;
  assert.equal(cells.length, R * K, `${what}: ${cells.length} cells shown, engine has ${R}×${K}`);
  for (const c of cells) {
    const v = tensor.data[c.i * K + c.j];
    assert.equal(c.text, cellText(v), `${what}[${c.i}][${c.j}] shows '${c.text}', engine ${v}`);
    if (Number.isFinite(v)) assert.ok(Math.abs(c.value - v) <= 1e-6 * Math.max(1, Math.abs(v)), `${what}[${c.i}][${c.j}] hover ${c.value} vs engine ${v}`);
    else assert.equal(c.value, v, `${what}[${c.i}][${c.j}]`);
  }
}

/** Opens step `n` (0-based) and waits until its stage is drawn. */
async function step(n, id) {
  await page.locator(`nav.steps button[data-step="${n}"]`).click();
  await page.waitForFunction((id) => document.querySelector('.stage')?.dataset.stage === id, id);
  await settle(page);
}

test('the random-weights examples say so and point to Open a model…', async () => {
  const hint = await page.locator('form.settings .example-random').textContent();
  assert.ok(hint.includes('random weights') && hint.includes('Open a model…'), hint);
  assert.equal(await page.locator('.open-button').textContent(), 'Open a model…');
  assert.equal(await page.locator('select[name="model"] option[value="pretrained"]').isDisabled(), true, 'nothing opened yet');
});

test('Open a model… opens a GPT-2 through the file picker and walks one head through its real stages', async () => {
  await page.locator('input[name="modelFiles"]').setInputFiles(files());
  await page.waitForFunction(() => window.__attnlab.walk().pretrained.phase === 'ready', null, { timeout: 30000 });
  const opened = await page.evaluate(() => window.__attnlab.walk().pretrained);
  assert.equal(opened.loaded, opened.total, 'the progress reached the whole file');
  assert.ok(opened.total > 0 && opened.total <= weights.length);
  assert.deepEqual([opened.info.layers, opened.info.heads, opened.info.dModel, opened.info.vocab], [1, 2, 8, 50257]);
  assert.equal(opened.info.tokenizer.source, 'bundled', 'no tokenizer files: GPT-2’s own, fetched from the page');
  assert.match(await page.locator('.open-status').textContent(), /Opened model\.safetensors: layers 1, heads 2, d_model 8/);
  assert.equal(await page.locator('select[name="model"]').inputValue(), 'pretrained');

  await page.locator('input[name="pretrainedText"]').fill(SENTENCE);
  await page.waitForFunction((ids) => {
    const s = window.__attnlab.walk();
    return s.status === 'ready' && JSON.stringify(s.trace?.model?.tokens) === JSON.stringify(ids);
  }, IDS, { timeout: 30000 });
  await settle(page);
  // The token boundaries under the sentence: one box per token, with its id.
  const boxes = await page.$$eval('.token-spans .tok', (es) => es.map((e) => [e.textContent, Number(e.dataset.id)]));
  assert.deepEqual(boxes, [['Hello', 15496], ['␣world', 995], [',', 11], ['␣this', 428], ['␣is', 318]]);

  const generate = await page.evaluate(() => window.__attnlab.walk().settings.pretrainedGenerate);
  const ref = await engineReference(IDS, generate);
  const stepIds = await page.evaluate(() => Array.from(document.querySelectorAll('nav.steps button')).map((b) => b.dataset.step));
  assert.ok(stepIds.length >= 18);

  await step(0, 'tokens');
  assert.deepEqual(await page.$$eval('.stage .chip .w', (es) => es.map((e) => e.textContent)), ['Hello', '␣world', ',', '␣this', '␣is']);

  // Head 1 of layer 0: Q, K, V, scores, scaling, mask, softmax, weighted sum.
  await step(2, 'projections');
  await page.locator('.head-picker button[data-head="1"]').click();
  await settle(page);
  compare(await readMatrix(page, 'q-h'), ref.stages.q[1], 'q head 1');
  compare(await readMatrix(page, 'k-h'), ref.stages.k[1], 'k head 1');
  compare(await readMatrix(page, 'v-h'), ref.stages.v[1], 'v head 1');
  assert.match(await page.locator('.explain').textContent(), /real weights of layer 0 of model\.safetensors/);
  await step(3, 'scores');
  compare(await readMatrix(page, 'scores'), ref.stages.scores[1], 'scores head 1');
  await step(4, 'scaling');
  compare(await readMatrix(page, 'scaled'), ref.stages.scaled[1], 'scaled head 1');
  await step(5, 'mask');
  compare(await readMatrix(page, 'masked'), ref.stages.masked[1], 'masked head 1');
  await step(6, 'softmax');
  const w = await readMatrix(page, 'weights');
  compare(w, ref.stages.weights[1], 'weights head 1');
  const T = IDS.length;
  for (let i = 0; i < T; i++) {
    const row = w.filter((c) => c.i === i);
    const sum = row.reduce((a, c) => a + c.value, 0);
    assert.ok(Math.abs(sum - 1) <= 1e-5, `weights row ${i} sums to ${sum}`);
    for (const c of row) if (c.j > c.i) assert.equal(c.value, 0, 'causal: a later key has weight 0');
  }
  await step(7, 'weighted-sum');
  compare(await readMatrix(page, 'context'), ref.stages.context[1], 'context head 1');
  // The layer: every head's map, the concat and W_O.
  await step(8, 'heads');
  compare(await readMatrix(page, 'heads-weights-h0'), ref.stages.weights[0], 'map of head 0');
  compare(await readMatrix(page, 'heads-weights-h1'), ref.stages.weights[1], 'map of head 1');
  await step(9, 'concat');
  compare(await readMatrix(page, 'concat'), ref.stages.concat[0], 'concat');
  await step(10, 'output');
  compare(await readMatrix(page, 'output'), ref.stages.output[0], 'output (W_O)');

  // Generation through the KV cache: the model's own greedy tokens after the sentence.
  await step(17, 'kv-cache');
  const g = await page.evaluate(() => window.__attnlab.walk().trace.kvCache.generation);
  assert.deepEqual(g.tokens, ref.generated, 'the tokens generated equal Model.generate');
  assert.equal(g.prompt, T);
  assert.ok((await page.locator('.stage').textContent()).includes('→'), 'the generated rows are marked →');
  assert.match(await page.locator('.explain').textContent(), /Continuation: “/);
  await screenshot(page, 'walk-pretrained-1366');
});

test('a truncated checkpoint is refused with a named error, in English and in Chinese', async () => {
  await page.locator('input[name="modelFiles"]').setInputFiles(files(weights.subarray(0, weights.length - 7)));
  await page.waitForFunction(() => window.__attnlab.walk().pretrained.phase === 'error', null, { timeout: 30000 });
  const error = page.locator('.open-error');
  assert.equal(await error.getAttribute('data-error'), 'truncated');
  assert.match(await error.textContent(), /model\.safetensors could not be opened: the file is truncated/);
  assert.match(await error.textContent(), /not a range within the data buffer/, 'the engine’s own words are shown too');
  // The model it showed is gone: the walkthrough is back on random weights, and says so.
  await page.waitForFunction(() => window.__attnlab.walk().settings.model === 'random' && window.__attnlab.walk().status === 'ready');
  assert.equal(await page.locator('select[name="model"] option[value="pretrained"]').isDisabled(), true);
  await page.locator('.lang-switch button[data-lang="zh"]').click();
  await page.waitForFunction(() => document.querySelector('.open-error .error-title')?.textContent.includes('无法打开'));
  assert.match(await error.textContent(), /无法打开 model\.safetensors：文件不完整/);
  assert.equal(await page.locator('.open-button').textContent(), '打开模型…');
  await page.locator('.lang-switch button[data-lang="en"]').click();
});

test('every other refusal is named too: a vocabulary GPT-2’s tokenizer does not fit, a bad config.json, files that are not a checkpoint', async () => {
  const other = join(repoRoot, 'tests', 'reference', 'fixtures', 'gpt2', 'hf_f32');
  const file = (name, buffer, mimeType = 'application/octet-stream') => ({ name, mimeType, buffer });
  const cases = [
    // 96 tokens: GPT-2's bundled tokenizer is refused by the engine, naming both sizes.
    [[file('model.safetensors', readFileSync(join(other, 'model.safetensors'))), file('config.json', readFileSync(join(other, 'config.json')))], 'tokenizer', /could not be opened: the tokenizer does not fit this model/],
    [[file('model.safetensors', weights), file('config.json', Buffer.from('{"n_head": 3}'))], 'config', /could not be opened: its config\.json was refused.*n_head 3 does not divide n_embd 8/],
    [[file('config.json', config)], 'picker', /No weights picked/],
    [[file('model.safetensors', weights), file('vocab.json', Buffer.from('{}'))], 'picker', /not one whole tokenizer: pick vocab\.json \+ merges\.txt, or encoder\.json \+ vocab\.bpe, or vocab\.txt/],
  ];
  for (const [picked, kind, words] of cases) {
    await page.evaluate(() => document.querySelector('.open-error')?.removeAttribute('data-error'));
    await page.locator('input[name="modelFiles"]').setInputFiles(picked);
    await page.waitForFunction(() => document.querySelector('.open-error')?.dataset.error, null, { timeout: 30000 });
    assert.equal(await page.locator('.open-error').getAttribute('data-error'), kind, picked.map((f) => f.name).join(', '));
    assert.match(await page.locator('.open-error').textContent(), words);
  }
  assert.equal(await page.locator('select[name="model"]').inputValue(), 'random');
});
