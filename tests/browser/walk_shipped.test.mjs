// The walkthrough on the models attnlab trained on real text and ships with the page (models/):
// the page's first load fetches none of them; choosing `tang` or `brown` fetches that one with its
// progress, opens it with the tokenizer saved inside it, and sets a text in its language; the
// tokens, a head's weights and the generated continuation equal what a separate engine in the page
// computes from the same file; a prompt in traditional characters is answered in traditional ones.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { readMatrix, repoRoot, screenshot, settle, useWalkthroughPage, waitForWalkthrough } from './support.mjs';

const w = useWalkthroughPage({ isolation: true });
const fetched = [];

/** The ids, Model.trace's layer-0 weights of `head` and Model.generate of models/<name>.safetensors on `text`, in a separate engine. */
function engineReference(name, text, head, generate) {
  return w.page.evaluate(async ({ name, text, head, generate }) => {
    if (!window.__refLab) {
      const { loadAttnLab } = await import(new URL('engine/loader.mjs', document.baseURI).href);
      window.__refLab = await loadAttnLab({ flavour: 'single' });
    }
    const lab = window.__refLab;
    const bytes = new Uint8Array(await (await fetch(new URL(`models/${name}.safetensors`, document.baseURI))).arrayBuffer());
    const model = lab.Model.load(bytes);
    const tok = model.tokenizer();
    try {
      const begin = tok.beginId();
      const ids = [...(begin === null ? [] : [begin]), ...Array.from(tok.encode(text))];
      const tr = model.trace(Int32Array.from(ids), { layer: 0 });
      const w = tr.stage('weights', head);
      const weights = { shape: w.shape, data: Array.from(w.data) };
      tr.delete();
      const generated = Array.from(model.generate(Int32Array.from(ids), generate, { temperature: 0 }));
      return { ids, begin, layers: model.config().numLayers, weights, generated, continuation: tok.decodeLike(Int32Array.from(generated.slice(ids.length)), text) };
    } finally {
      tok.delete();
      model.delete();
    }
  }, { name, text, head, generate });
}

async function openShipped(name) {
  await w.page.locator(`.shipped-button[data-model="${name}"]`).click();
  await w.page.waitForFunction((file) => {
    const p = window.__attnlab.walk().pretrained;
    return p.phase === 'ready' && p.info?.name === file;
  }, `${name}.safetensors`, { timeout: 60000 });
}

/** Waits until the walkthrough shows the opened model on `text`. */
async function tracedOn(text) {
  await w.page.waitForFunction((text) => {
    const s = window.__attnlab.walk();
    return s.status === 'ready' && s.trace?.model?.pretrained?.text === text;
  }, text, { timeout: 60000 });
  await settle(w.page);
}

test('the page\'s first load fetches no shipped model', async () => {
  w.page.on('response', (r) => fetched.push(r.url()));
  await w.page.goto(`${w.b.url}?view=walk`);
  await waitForWalkthrough(w.page);
  assert.deepEqual(fetched.filter((u) => /\/models\//.test(u)), []);
});

test('tang opens with its own character tokenizer and a Tang couplet; tokens, weights and continuation are the engine\'s', async () => {
  await openShipped('tang');
  const p = await w.page.evaluate(() => window.__attnlab.walk().pretrained);
  const size = readFileSync(join(repoRoot, 'models', 'tang.safetensors')).length;
  assert.equal(p.loaded, size, 'the progress reached the whole file');
  assert.deepEqual(p.info.tokenizer, { kind: 'char', source: 'shipped' });
  assert.match(await w.page.locator('.open-status').textContent(), /Opened tang\.safetensors: layers \d+, heads \d+/);
  const text = await w.page.locator('input[name="pretrainedText"]').inputValue();
  assert.equal(text, '白日依山尽，黄河入海流。');
  await tracedOn(text);

  const generate = await w.page.evaluate(() => window.__attnlab.walk().settings.pretrainedGenerate);
  const ref = await engineReference('tang', text, 1, generate);
  assert.equal(await w.page.locator('select[name="pretrainedLayer"] option').count(), ref.layers);
  const shown = await w.page.evaluate(() => window.__attnlab.walk().trace.model);
  assert.deepEqual(shown.tokens, ref.ids, 'the begin token, then one token a character');
  assert.deepEqual(shown.labels, ['⟨s⟩', ...[...text]]);

  await w.page.locator('nav.steps button[data-step="6"]').click();
  await w.page.waitForFunction(() => document.querySelector('.stage')?.dataset.stage === 'softmax');
  await w.page.locator('.head-picker button[data-head="1"]').click();
  await settle(w.page);
  const cells = await readMatrix(w.page, 'weights');
  const [R, K] = ref.weights.shape;
  assert.equal(cells.length, R * K);
  for (const c of cells) assert.ok(Math.abs(c.value - ref.weights.data[c.i * K + c.j]) <= 1e-6, `weights[${c.i}][${c.j}]`);

  const g = await w.page.evaluate(() => window.__attnlab.walk().trace.kvCache.generation);
  assert.deepEqual(g.tokens, ref.generated, 'the tokens generated equal Model.generate');
  assert.equal(shown.pretrained.continuation, ref.continuation);
  await screenshot(w.page, 'walk-shipped-tang-1366');
});

test('a prompt in traditional characters reads as the same ids and is answered in traditional characters', async () => {
  const simplified = await w.page.locator('input[name="pretrainedText"]').inputValue();
  const traditional = '白日依山盡，黃河入海流。';
  await w.page.locator('input[name="pretrainedText"]').fill(traditional);
  await tracedOn(traditional);
  const shown = await w.page.evaluate(() => window.__attnlab.walk().trace.model);
  const generate = await w.page.evaluate(() => window.__attnlab.walk().settings.pretrainedGenerate);
  const ref = await engineReference('tang', simplified, 1, generate);
  assert.deepEqual(shown.tokens, ref.ids, 'the traditional line has the simplified line\'s ids');
  const refTraditional = await engineReference('tang', traditional, 1, generate);
  assert.equal(shown.pretrained.continuation, refTraditional.continuation);
  assert.notEqual(refTraditional.continuation, ref.continuation, 'this continuation has a character that differs between the scripts');
});

test('brown opens with its own BPE and an English sentence; the tokens are its tokenizer\'s', async () => {
  await openShipped('brown');
  const p = await w.page.evaluate(() => window.__attnlab.walk().pretrained);
  assert.equal(p.info.tokenizer.source, 'shipped');
  const text = await w.page.locator('input[name="pretrainedText"]').inputValue();
  assert.match(text, /^[A-Za-z ]+$/);
  await tracedOn(text);
  const generate = await w.page.evaluate(() => window.__attnlab.walk().settings.pretrainedGenerate);
  const ref = await engineReference('brown', text, 0, generate);
  const shown = await w.page.evaluate(() => window.__attnlab.walk().trace.model);
  assert.equal(ref.begin, null);
  assert.deepEqual(shown.tokens, ref.ids);
  assert.equal(shown.pretrained.continuation, ref.continuation);
  const g = await w.page.evaluate(() => window.__attnlab.walk().trace.kvCache.generation);
  assert.deepEqual(g.tokens, ref.generated);
});

test('in Chinese the choice reads in Chinese, and its screenshots at 1366 and 390 px', async () => {
  await w.page.locator('.lang-switch button[data-lang="zh"]').click();
  await w.page.waitForFunction(() => document.documentElement.lang.startsWith('zh'));
  const labels = await w.page.$$eval('.shipped-button', (bs) => bs.map((x) => x.textContent));
  assert.ok(labels.every((l) => /[\u4e00-\u9fff]/.test(l)), labels.join(' | '));
  assert.match(await w.page.locator('footer.foot').textContent(), /配色/, 'the footer follows the language switch');
  await openShipped('tang');
  await tracedOn(await w.page.locator('input[name="pretrainedText"]').inputValue());
  await screenshot(w.page, 'walk-shipped-zh-1366');
  await w.page.setViewportSize({ width: 390, height: 900 });
  await settle(w.page);
  const overflow = await w.page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow} px`);
  await screenshot(w.page, 'walk-shipped-zh-390');
  await w.page.setViewportSize({ width: 1360, height: 900 });
  await w.page.locator('.lang-switch button[data-lang="en"]').click();
});

test('no console errors or failed requests', () => {
  assert.deepEqual(w.b.problems, []);
});
