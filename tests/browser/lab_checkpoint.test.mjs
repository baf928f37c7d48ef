// Loading a checkpoint restores every control of the lab's form from the model's own config
// (Model.config()), not from what the form held before: the checkpoints are made by a separate
// engine in the page with switches away from the form's, then loaded through the file input.
//   node --test tests/browser/lab_checkpoint.test.mjs
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { loadReferenceEngine, openLab } from './support.mjs';

let b;
let page;
before(async () => {
  ({ b, page } = await openLab({ task: 'reverse', length: 4, vocab: 6, steps: 30 }));
});
after(async () => {
  await b?.close();
});

/** A checkpoint (base64) of a fresh model of `options` (plus the task's geometry) with `notes`, and the model's config. */
async function checkpoint(taskName, taskOptions, options, notes) {
  await loadReferenceEngine(page);
  return page.evaluate(async ({ taskName, taskOptions, options, notes }) => {
    const lab = window.__refLab;
    const task = new lab.Task(taskName, taskOptions);
    const geometry = taskName === 'series' ? { numFeatures: 1, horizon: task.numClasses() }
      : taskName === 'shapes' ? { imageSize: task.imageSize(), numClasses: task.numClasses() }
      : { vocabSize: task.vocabSize(), maxLen: Math.max(32, task.seqLen()) };
    const model = new lab.Model({ ...geometry, ...options });
    // Base64 crosses the DevTools protocol far faster than an array of numbers.
    const raw = model.save(notes);
    let bin = '';
    for (let i = 0; i < raw.length; i += 0x8000) bin += String.fromCharCode(...raw.subarray(i, i + 0x8000));
    const bytes = btoa(bin);
    const config = model.config();
    model.delete();
    task.delete();
    return { bytes, config };
  }, { taskName, taskOptions, options, notes });
}

/** Every control of the form as it shows now. */
const formValues = () =>
  page.$$eval('form.lab-settings input, form.lab-settings select', (els) =>
    Object.fromEntries(els.map((e) => [e.name, e.type === 'checkbox' ? e.checked : e.value])));

/** Loads the checkpoint through the form's file input; waits until the lab holds it (its message names the file). */
async function load(bytes, name) {
  await page.locator('input[name="checkpoint"]').setInputFiles({ name, mimeType: 'application/octet-stream', buffer: Buffer.from(bytes, 'base64') });
  await page.waitForFunction((name) => {
    const s = window.__attnlab.lab();
    return s.error || (s.phase === 'ready' && s.message?.includes(name));
  }, name);
  assert.equal(await page.evaluate(() => window.__attnlab.lab().error?.details ?? null), null);
}

test('a Transformer checkpoint sets architecture, widths, positions, norm, scale and every engine switch', async () => {
  const { bytes, config: c } = await checkpoint('sort', { length: 5, vocab: 7 }, {
    kind: 'decoder', dModel: 48, numHeads: 2, numLayers: 6, // 6 layers: beyond the form's choices ffDim: 96, positional: 'sinusoidal', norm: 'post', scale: false,
    normalizer: 'sigmoid', precision: 'bf16', attentionWindow: 2, globalTokens: 1, dropout: 0.1, tieQK: true, gradientCheckpointing: true, seed: 4,
  }, { task: 'sort', length: 5, vocab: 7, seed: 4 });
  const before = await formValues();
  assert.equal(before.norm, 'pre', 'the form starts elsewhere');
  await load(bytes, 'sort.safetensors');
  const f = await formValues();
  assert.deepEqual(
    { task: f.task, length: f.length, vocab: f.vocab, architecture: f.architecture, layers: f.layers, dModel: f.dModel, heads: f.heads, kvHeads: f.kvHeads, positional: f.positional, norm: f.norm, scale: f.scale },
    { task: 'sort', length: '5', vocab: '7', architecture: c.architecture, layers: String(c.numLayers), dModel: String(c.dModel), heads: String(c.numHeads), kvHeads: String(c.numKvHeads || c.numHeads), positional: c.positional, norm: c.norm, scale: c.scale },
  );
  assert.deepEqual(
    { normalizer: f.normalizer, variant: f.variant, precision: f.precision, window: f.window, globalTokens: f.globalTokens, dropout: f.dropout, ffMult: f.ffMult, tieQK: f.tieQK, checkpointing: f.checkpointing },
    { normalizer: c.normalizer, variant: c.variant, precision: c.precision, window: String(c.attentionWindow), globalTokens: String(c.globalTokens), dropout: '0.1', ffMult: String(c.ffDim / c.dModel), tieQK: c.tieQK, checkpointing: c.gradientCheckpointing },
  );
  // The held model's settings are the form's: nothing to rebuild, Train trains it further.
  assert.equal(await page.evaluate(() => JSON.stringify(window.__attnlab.lab().model.settings) === JSON.stringify(window.__attnlab.lab().settings)), true);

  // A second checkpoint with other switches replaces every value again.
  const second = await checkpoint('reverse', { length: 4, vocab: 6 }, {
    kind: 'decoder', dModel: 32, numHeads: 4, numKvHeads: 1, numLayers: 1, positional: 'learned', variant: 'linear', seed: 2,
  }, { task: 'reverse', length: 4, vocab: 6, seed: 2 });
  await load(second.bytes, 'reverse.safetensors');
  const g = await formValues();
  assert.deepEqual(
    { task: g.task, layers: g.layers, dModel: g.dModel, heads: g.heads, kvHeads: g.kvHeads, positional: g.positional, norm: g.norm, scale: g.scale, normalizer: g.normalizer, variant: g.variant, precision: g.precision, window: g.window, globalTokens: g.globalTokens, dropout: g.dropout, ffMult: g.ffMult, tieQK: g.tieQK, checkpointing: g.checkpointing },
    { task: 'reverse', layers: '1', dModel: '32', heads: '4', kvHeads: '1', positional: 'learned', norm: 'pre', scale: true, normalizer: 'softmax', variant: 'linear', precision: 'fp32', window: '0', globalTokens: '0', dropout: '0', ffMult: '4', tieQK: false, checkpointing: false },
  );
});

test('series and shapes checkpoints set their task, architecture and task fields', async () => {
  const series = await checkpoint('series', { context: 36, horizon: 8 }, {
    kind: 'forecaster', architecture: 'lstm', dModel: 16, numLayers: 2, maxLen: 36, seed: 1,
  }, { task: 'series', length: 36, vocab: 8, seed: 1 });
  await load(series.bytes, 'series.safetensors');
  let f = await formValues();
  assert.deepEqual({ task: f.task, architecture: f.architecture, length: f.length, vocab: f.vocab, layers: f.layers, dModel: f.dModel }, { task: 'series', architecture: 'lstm', length: '36', vocab: '8', layers: '2', dModel: '16' });
  await page.waitForFunction(() => window.__attnlab.lab().picture?.kind === 'forecast');

  const swin = await checkpoint('shapes', { length: 16, vocab: 5 }, {
    kind: 'encoder', architecture: 'swin', patchSize: 4, swinWindow: 2, positional: 'none', dModel: 32, numHeads: 4, numLayers: 2, seed: 1,
  }, {}); // no notes: the config alone says shapes
  await load(swin.bytes, 'swin.safetensors');
  f = await formValues();
  assert.deepEqual({ task: f.task, architecture: f.architecture, length: f.length, vocab: f.vocab, layers: f.layers, dModel: f.dModel, heads: f.heads }, { task: 'shapes', architecture: 'swin', length: '16', vocab: '5', layers: '2', dModel: '32', heads: '4' });
  await page.waitForFunction(() => window.__attnlab.lab().picture?.kind === 'images');
});

test('no console errors or failed requests', () => {
  assert.deepEqual(b.problems, []);
});
