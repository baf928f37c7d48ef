// Train on text in the lab: the page's first load fetches no corpus; training on the Tang poems
// fetches the tang training text once (its progress in the form), a sample of generated text
// appears beside the loss curve and equals the engine's continuation by the run's model (its
// checkpoint loaded into a separate engine in the page), and the model opens in the walkthrough
// ("Trained in the lab") on the poem's characters. The reader's own file that is not UTF-8 is
// refused with the engine's words, naming the byte. Screenshots at 1366 and 390 px, both languages.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { readFileSync } from 'node:fs';
import { labUrl, launch, loadReferenceEngine, screenshot, waitForLabDone, waitForLabPhase } from './support.mjs';

const SETTINGS = { task: 'text', corpus: 'tang', length: 72, layers: 1, dModel: 32, heads: 4, kvHeads: 4, positional: 'rope', norm: 'pre', scale: 1, lr: 0.003, batch: 8, steps: 30, seed: 1 };
let b;
let page;
const corpusRequests = [];
before(async () => {
  b = await launch({ isolation: true });
  page = await b.newPage('');
  page.on('response', (r) => {
    if (r.url().includes('/corpora/')) corpusRequests.push(r.url());
  });
  await page.goto(b.url + labUrl({ ...SETTINGS, lang: 'en' }));
  await page.evaluate(() => window.__attnlab.ready);
  await waitForLabPhase(page, 'idle');
});
after(async () => {
  await b?.close();
});

test('the form offers Train on text with its corpora; nothing is fetched before Train', async () => {
  assert.equal(await page.locator('select[name="task"]').inputValue(), 'text');
  assert.equal(await page.locator('select[name="corpus"]').inputValue(), 'tang');
  assert.equal(await page.locator('.text-source').isVisible(), true);
  assert.match(await page.locator('.text-tokens').textContent(), /one character each \(the 4000 most frequent/);
  assert.equal(await page.locator('.text-file').isVisible(), false, 'the file picker is for "my own file" only');
  assert.equal(await page.locator('select[name="architecture"] option[value="lstm"]').isDisabled(), true);
  assert.deepEqual(corpusRequests, [], 'the first load fetches no corpus');
});

test('training on tang shows the engine\'s sample beside the loss, and the model opens in the walkthrough', async () => {
  // The fetch's progress bar: shown while the text comes in (recorded as the page draws it).
  await page.evaluate(() => {
    window.__textLoadShown = [];
    const load = document.querySelector('.text-load');
    new MutationObserver(() => {
      if (!load.hidden) window.__textLoadShown.push(load.querySelector('.text-load-note').textContent);
    }).observe(load, { attributes: true, subtree: true, childList: true, characterData: true });
  });
  await page.locator('.lab button[data-act="train"]').click();
  await waitForLabDone(page, 240000);
  assert.equal(corpusRequests.length, 1, `one fetch of the tang text: ${corpusRequests}`);
  assert.match(corpusRequests[0], /corpora\/tang\.txt$/);
  assert.equal(await page.evaluate(() => window.__attnlab.lab().textLoad), null, 'the progress bar goes once the text is in');
  // The sample beside the curve, at the run's last step.
  const sample = await page.evaluate(() => window.__attnlab.lab().sample);
  assert.ok(sample, 'a sample was posted');
  assert.equal(sample.step, SETTINGS.steps);
  assert.match(sample.prompt, /^[\u4e00-\u9fff]{5,7}，$/u, `the prompt is a held-out first line: ${sample.prompt}`);
  assert.equal(await page.locator('.lab-sample').isVisible(), true);
  assert.equal(await page.locator('.lab-sample .sample-prompt').textContent(), sample.prompt);
  assert.equal(await page.locator('.lab-sample .sample-text').textContent(), sample.text);
  const row = await page.locator('.lab-curves-row').boundingBox();
  const curves = await page.locator('.lab-curves-row .curves').boundingBox();
  const box = await page.locator('.lab-sample').boundingBox();
  assert.ok(box.x > curves.x + curves.width / 2 && box.y < curves.y + curves.height, `the sample stands beside the curves at 1360 px: ${JSON.stringify({ row, curves, box })}`);
  const shown = await page.evaluate(() => window.__textLoadShown);
  assert.ok(shown.some((t) => /Fetching the tang training text: [\d.]+ (of [\d.]+ )?MB/.test(t)), `the progress bar was drawn: ${JSON.stringify(shown.slice(0, 3))}`);
  assert.equal(await page.locator('.text-load').isVisible(), false);

  // The engine's own continuation by the saved model: the same text.
  const [download] = await Promise.all([page.waitForEvent('download'), page.locator('.lab button[data-act="save"]').click()]);
  const checkpoint = readFileSync(await download.path());
  await loadReferenceEngine(page);
  const engine = await page.evaluate(({ bytes, prompt, seed }) => {
    const lab = window.__refLab;
    const model = lab.Model.load(Uint8Array.from(bytes));
    const tok = model.tokenizer();
    const room = model.config().maxLen - tok.encode(prompt).length - 1;
    const text = model.continueText(prompt, Math.max(1, Math.min(48, room)), { temperature: 0.8, seed });
    const notes = lab.Model.checkpointNotes(Uint8Array.from(bytes));
    tok.delete();
    model.delete();
    return { text, notes };
  }, { bytes: Array.from(checkpoint), prompt: sample.prompt, seed: SETTINGS.seed });
  assert.equal(engine.text, sample.text, 'the page shows the engine\'s sample');
  assert.equal(engine.notes.task, 'text');
  assert.equal(engine.notes.corpus, 'tang');
  await screenshot(page, 'lab-text-tang');

  // The walkthrough's "Trained in the lab" reads the poem's characters with the model's tokenizer.
  await page.locator('nav.tabs button[data-view="walk"]').click();
  await page.waitForFunction(() => window.__attnlab.walk().status === 'ready', null, { timeout: 30000 });
  await page.locator('select[name="model"]').selectOption('trained');
  await page.waitForFunction(() => { const s = window.__attnlab.walk(); return s.status === 'ready' && s.trace?.model; }, null, { timeout: 30000 });
  const m = await page.evaluate(() => window.__attnlab.walk().trace.model);
  assert.equal(m.kind, 'decoder');
  assert.deepEqual(m.labels.join(''), sample.prompt, `the lab's sample input, labelled with its characters: ${m.labels}`);
  await page.locator('nav.tabs button[data-view="lab"]').click();
});

test('the reader\'s own file that is not UTF-8 is refused, naming the byte', async () => {
  await page.locator('select[name="corpus"]').selectOption('file');
  assert.equal(await page.locator('.text-file').isVisible(), true);
  assert.match(await page.locator('.text-file-name').textContent(), /No file chosen yet/);
  await page.locator('input[name="textFile"]').setInputFiles({ name: 'latin1.txt', mimeType: 'text/plain', buffer: Buffer.from('caf\xe9 au lait\n', 'latin1') });
  await page.waitForFunction(() => window.__attnlab.lab().textFile === 'latin1.txt');
  await page.locator('.lab button[data-act="train"]').click();
  await waitForLabPhase(page, 'error', 60000);
  const error = await page.evaluate(() => window.__attnlab.lab().error);
  assert.match(error.details, /not valid UTF-8 at byte 3 \(byte value 233\)/);
  assert.equal(await page.evaluate(() => window.__attnlab.lab().model), null, 'no model is left half-made');
});

test('screenshots: Train on text at 1366 and 390 px in English and Chinese', async () => {
  await page.locator('select[name="corpus"]').selectOption('tang');
  for (const lang of ['en', 'zh']) {
    await page.goto(b.url + labUrl({ ...SETTINGS, steps: 25, lang }));
    await page.evaluate(() => window.__attnlab.ready);
    await waitForLabPhase(page, 'idle');
    await page.locator('.lab button[data-act="train"]').click();
    await waitForLabDone(page, 240000);
    await page.waitForFunction(() => window.__attnlab.lab().sample !== null);
    if (lang === 'zh') {
      assert.match(await page.locator('.lab-sample h3').textContent(), /它写出的文字/);
      assert.match(await page.locator('.text-tokens').textContent(), /一个字符一个/);
    }
    for (const width of [1366, 390]) {
      await page.setViewportSize({ width, height: 900 });
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 1, `${lang} ${width}px: the page is ${overflow}px wider than the window`);
      await screenshot(page, `lab-text-${lang}-${width}`);
    }
    await page.setViewportSize({ width: 1360, height: 900 });
  }
  // A goto aborts the old page's loads in flight (its worker script): not a problem of the page.
  assert.deepEqual(b.problems.filter((p) => !/favicon/.test(p) && !/net::ERR_ABORTED|NS_BINDING_ABORTED/.test(p)), []);
});
