// "Try the model" and checkpoint errors: the input is checked against the task's format and
// explained in the task's words (never token ids or byte escapes), the field knows when a model
// exists, and a refused checkpoint gets one sentence, styled as an error, with the engine's text
// one click away.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { readFileSync } from 'node:fs';
import { openLab, screenshot, settle, waitForLabPhase, waitForLabDone } from './support.mjs';

let b;
let page;
before(async () => {
  ({ b, page } = await openLab({ task: 'reverse', length: 4, vocab: 6, steps: 300, seed: 1 }));
});
after(async () => {
  await b?.close();
});

async function tryModel(text) {
  await page.locator('form.try input[name="prompt"]').fill(text);
  await page.evaluate(() => { document.querySelector('.try-out').textContent = ''; });
  await page.locator('form.try button[data-act="try"]').click();
  await page.waitForFunction(() => document.querySelector('.try-out').textContent !== '');
  return page.locator('.try-out').textContent();
}

test('before training the try field says what is missing; after training it explains the format', async () => {
  assert.match(await page.locator('.try-hint').textContent(), /Train a model \(or load a checkpoint\) first/);
  assert.equal(await page.locator('form.try button[data-act="try"]').isDisabled(), true);
  await page.locator('.lab button[data-act="train"]').click();
  await waitForLabDone(page, 120000);
  await settle(page);
  const hint = await page.locator('.try-hint').textContent();
  assert.doesNotMatch(hint, /first/);
  assert.match(hint, /Type 4 symbols from 0…5, separated by spaces, then \| \(the separator\)/);
  assert.equal(await page.locator('form.try button[data-act="try"]').isEnabled(), true);
});

test('typed input is checked against the task and explained in its words', async () => {
  assert.equal(await tryModel('5 0 3 2 |'), '5 0 3 2 |  →  2 3 0 5');
  assert.equal(await tryModel('5 0 3 2'), '5 0 3 2 |  →  2 3 0 5', 'the separator is added when it is missing');
  assert.match(await tryModel('5 0 3'), /^reverse reads exactly 4 symbols before the \|; you typed 3\./);
  assert.match(await tryModel('5 0 3 2 1 |'), /you typed 5/);
  assert.match(await tryModel('5 0 | 3 2'), /Type the separator \| once, at the end/);
  const accent = await tryModel('5 é 3 2 |');
  assert.match(accent, /^‘é’ is not a symbol of this task: use whole numbers 0…5/);
  assert.doesNotMatch(accent, /\\x[0-9a-f]{2}|token/);
  assert.equal(await page.locator('.try-out').getAttribute('class'), 'try-out error');
  assert.match(await tryModel('7 0 3 2 |'), /‘7’ is not a symbol of this task/);
  await screenshot(page, 'lab-try-error');
});

test('a refused checkpoint gets one sentence, styled as an error, with the details folded away', async () => {
  const banner = page.locator('.lab-banner');
  await page.locator('input[name="checkpoint"]').setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('this is not a safetensors file at all') });
  await page.waitForFunction(() => document.querySelector('.lab-banner').dataset.kind === 'error');
  assert.equal(await banner.getAttribute('data-kind'), 'error');
  assert.equal(await banner.locator('.text').textContent(), '“notes.txt” is not a checkpoint this lab can load: it does not start like a safetensors file (its first 8 bytes are not a plausible header length).');
  const details = banner.locator('details');
  assert.equal(await details.isVisible(), true);
  assert.equal(await details.getAttribute('open'), null, 'the engine text is one click away');
  assert.equal(await details.locator('pre').isVisible(), false);
  assert.match(await details.locator('pre').textContent(), /SafeTensors::parse: header length \d+ exceeds the limit/);
  await details.locator('summary').click();
  assert.equal(await details.locator('pre').isVisible(), true);
  await screenshot(page, 'lab-bad-checkpoint-details');

  const [download] = await Promise.all([page.waitForEvent('download'), page.locator('.lab button[data-act="save"]').click()]);
  const checkpoint = readFileSync(await download.path());
  const cases = [
    ['cut.safetensors', checkpoint.subarray(0, checkpoint.length - 100), /the file is cut short/],
    ['tiny.bin', Buffer.from('abc'), /it is too short to be one/],
    ['json.safetensors', Buffer.concat([checkpoint.subarray(0, 8), Buffer.from('{"oops": ')]), /not valid safetensors JSON|cut short/],
  ];
  for (const [name, bytes, why] of cases) {
    await page.locator('input[name="checkpoint"]').setInputFiles({ name, mimeType: 'application/octet-stream', buffer: bytes });
    await page.waitForFunction((n) => document.querySelector('.lab-banner .text').textContent.includes(n), name);
    const text = await banner.locator('.text').textContent();
    assert.match(text, why, text);
    assert.doesNotMatch(text, /SafeTensors::|json\.exception|\d{12,}/, 'no parser text in the sentence');
  }
  assert.equal(await tryModel('5 0 3 2 |'), '5 0 3 2 |  →  2 3 0 5', 'the trained model is still loaded');
});

test('a file the browser cannot read is refused in one sentence, and the model stays', async () => {
  const banner = page.locator('.lab-banner');
  // As when the chosen file is moved or deleted before the page reads it.
  await page.evaluate(() => {
    window.__arrayBuffer = File.prototype.arrayBuffer;
    File.prototype.arrayBuffer = () => Promise.reject(new DOMException('the file is gone', 'NotReadableError'));
  });
  try {
    await page.locator('input[name="checkpoint"]').setInputFiles({ name: 'gone.safetensors', mimeType: 'application/octet-stream', buffer: Buffer.from('x') });
    await page.waitForFunction(() => document.querySelector('.lab-banner .text').textContent.includes('gone.safetensors'));
  } finally {
    await page.evaluate(() => { File.prototype.arrayBuffer = window.__arrayBuffer; });
  }
  assert.equal(await banner.getAttribute('data-kind'), 'error');
  assert.equal(await banner.locator('.text').textContent(), '“gone.safetensors” is not a checkpoint this lab can load: the browser could not read the file (was it moved or deleted after you chose it?).');
  assert.match(await banner.locator('details pre').textContent(), /NotReadableError: the file is gone/);
  assert.equal(await tryModel('5 0 3 2 |'), '5 0 3 2 |  →  2 3 0 5', 'the trained model is still loaded');
});

test('the other tasks\' formats: key–value pairs and a key, brackets, characters of the corpus', async () => {
  const field = (name) => page.locator(`.lab-settings [name="${name}"]`);
  const trainBriefly = async (task) => {
    await page.locator('.lab button[data-act="reset"]').click();
    await waitForLabPhase(page, 'idle');
    await field('task').selectOption(task);
    await field('steps').fill('20');
    await page.locator('.lab button[data-act="train"]').click();
    await waitForLabDone(page, 120000);
  };
  await trainBriefly('assoc_recall');  // 2 pairs, keys k0…k3
  assert.match(await tryModel('k1 v2 k0 v3 | k1'), /^k1 v2 k0 v3 \| k1  →  v\d$/);
  assert.match(await tryModel('k1 v2 k0 v3 k1'), /^Put \| before the last word, the key you ask about/);
  assert.match(await tryModel('k1 v2 | k1'), /^This model reads exactly 2 pairs \(4 words\) before the \|; you typed 2 words/);
  assert.match(await tryModel('k1 v2 k1 v3 | k1'), /^Each pair needs its own key/);
  assert.match(await tryModel('k1 v2 k0 v3 | k2'), /^Ask about one of the pairs' keys \(k1, k0\), not ‘k2’/);
  assert.match(await tryModel('k1 v2 k9 v3 | k1'), /^‘k9’ is not a key or value of this task: keys are k0…k3, values v0…v3/);
  await trainBriefly('brackets');  // up to 12 brackets of 2 kinds
  assert.match(await tryModel('([])'), /^\(\[\]\)  →  (balanced|not balanced) \(p\(balanced\) = [\d.]+\)$/);
  assert.match(await tryModel('({})'), /^‘\{’ is not one of this task's brackets \(\( \) \[ \]\)/);
  assert.match(await tryModel('()'.repeat(7)), /^This classifier reads at most 12 brackets; you typed 14/);
  await trainBriefly('char_lm');  // a window of 32 characters
  assert.match(await tryModel('The '), /^The ▌/);
  assert.match(await tryModel('naïve'), /^‘ï’ does not occur in the text the model learned from/);
  assert.match(await tryModel('x'.repeat(40)), /^The model reads a window of 32 characters; type at most 32 \(you typed 40\)/);
});

test('no console errors or failed requests', () => {
  assert.deepEqual(b.problems, []);
});
