// The lab's engine switches: a link's switches fill the form, reach the engine (the parameter
// count follows the feed-forward width and tie-qk exactly as a separate engine sizes that model),
// a model trains with them, and the URL keeps only the switches that differ from their defaults.
//   node --test tests/browser/lab_switches.test.mjs
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { labUrl, launch, loadReferenceEngine, screenshot, waitForLabPhase } from './support.mjs';

let b;
let page;
const BASE = { task: 'reverse', length: 4, vocab: 6, layers: 1, dModel: 16, heads: 2, kvHeads: 2, positional: 'rope', norm: 'pre', scale: 1, lr: 0.003, batch: 16, steps: 20, seed: 1 };
before(async () => {
  b = await launch({ isolation: true });
  page = await b.newPage(labUrl({ ...BASE, normalizer: 'sigmoid', ffMult: 2, tieQK: 1, schedule: 'constant', dropout: 0.1 }));
  await page.evaluate(() => window.__attnlab.ready);
  await waitForLabPhase(page, 'idle');
});
after(async () => {
  await b?.close();
});

test('switches from the link fill the form, size the model as the engine does, and train', async () => {
  assert.equal(await page.locator('.lab select[name="normalizer"]').inputValue(), 'sigmoid');
  assert.equal(await page.locator('.lab select[name="ffMult"]').inputValue(), '2');
  assert.equal(await page.locator('.lab input[name="tieQK"]').isChecked(), true);
  assert.equal(await page.locator('.lab select[name="schedule"]').inputValue(), 'constant');
  await page.waitForFunction(() => window.__attnlab.lab().formParameters != null);
  const shown = await page.evaluate(() => window.__attnlab.lab().formParameters.count);
  await loadReferenceEngine(page);
  const ref = await page.evaluate(async () => {
    const lab = window.__refLab;
    const task = new lab.Task('reverse', { length: 4, vocab: 6, seed: 1 });
    const base = { kind: 'decoder', architecture: 'transformer', vocabSize: task.vocabSize(), maxLen: Math.max(32, task.seqLen()), dModel: 16, numHeads: 2, numKvHeads: 2, numLayers: 1, positional: 'rope', norm: 'pre', scale: true, seed: 1 };
    task.delete();
    const count = (o) => {
      const m = new lab.Model({ ...base, ...o });
      const n = m.numParameters();
      m.delete();
      return n;
    };
    return { withSwitches: count({ ffDim: 32, tieQK: true, normalizer: 'sigmoid', dropout: 0.1 }), plain: count({ ffDim: 64 }) };
  });
  assert.equal(shown, ref.withSwitches, 'the form’s parameter count is the engine’s for ffMult 2 and tie-qk');
  assert.ok(ref.withSwitches < ref.plain);
  await page.locator('.lab button[data-act="train"]').click();
  await waitForLabPhase(page, 'done', 120000);
  const m = await page.evaluate(() => window.__attnlab.lab().metrics);
  assert.equal(m.at(-1).step, 20);
  assert.ok(m.every((x) => Number.isFinite(x.loss)));
  const q = new URL(page.url()).searchParams;
  assert.equal(q.get('normalizer'), 'sigmoid');
  assert.equal(q.get('tieQK'), '1');
  assert.equal(q.get('precision'), null, 'defaults stay out of the link');
  await page.locator('details.engine-switches').evaluate((d) => (d.open = true));
  await screenshot(page, 'lab-engine-switches');
});
