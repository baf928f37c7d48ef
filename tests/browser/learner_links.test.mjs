// Links a teacher can send: every experiment and figure has an anchor; a link to one opens its
// chapter there with the settings it carries and offers the run, or starts it (x.<name>.run=1);
// each panel's and figure's Link button gives such a link; a chapter's URL carries no walkthrough
// or lab settings, and those come back with their tab.
//   node --test tests/browser/learner_links.test.mjs
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { launch } from './support.mjs';

let b;
let page;
before(async () => {
  b = await launch({ isolation: true });
  page = await b.newPage('?lang=en');
});
after(async () => {
  await b?.close();
});

const available = (name) => page.waitForFunction((n) => document.querySelector(`section.experiment[data-experiment="${n}"]`)?.dataset.available === '1', name, { timeout: 90000, polling: 100 });
const inView = (selector) => page.$eval(selector, (e) => {
  const r = e.getBoundingClientRect();
  return r.top < innerHeight && r.bottom > 0;
});

test('a link to an experiment opens its chapter there with its settings and offers the run', async () => {
  await page.goto(`${b.url}?lang=en&x.positional.steps=40#exp-positional`);
  await available('positional');
  assert.equal(await page.evaluate(() => window.__attnlab.chapters().chapter), 4, 'the anchor\'s chapter');
  const panel = page.locator('#exp-positional');
  assert.equal(await panel.getAttribute('data-experiment'), 'positional');
  assert.equal(await panel.locator('input[data-param="steps"]').inputValue(), '40');
  assert.equal(await panel.locator('.exp-offer').isVisible(), true, 'the run is offered');
  await page.waitForFunction(() => {
    const r = document.getElementById('exp-positional').getBoundingClientRect();
    return r.top < innerHeight && r.bottom > 0;
  }, null, { timeout: 30000 });
  assert.equal(await panel.getAttribute('data-phase'), null, 'offered, not started');
});

test('x.<name>.run=1 starts the run; the Link button gives both links', async () => {
  await page.goto(`${b.url}?lang=en&x.permutation.batches=2&x.permutation.run=1#exp-permutation`);
  await page.waitForFunction(() => document.querySelector('#exp-permutation')?.dataset.phase === 'done', null, { timeout: 90000, polling: 100 });
  assert.equal(new URL(page.url()).searchParams.get('x.permutation.run'), null, 'a reload does not start it again');
  assert.equal(await page.locator('#exp-permutation input[data-param="batches"]').inputValue(), '2');
  await page.locator('#exp-permutation button[data-act="link"]').click();
  const plain = new URL(await page.locator('#exp-permutation input[data-link="plain"]').inputValue());
  const run = new URL(await page.locator('#exp-permutation input[data-link="run"]').inputValue());
  assert.equal(plain.hash, '#exp-permutation');
  assert.equal(plain.searchParams.get('chapter'), '4');
  assert.equal(plain.searchParams.get('x.permutation.batches'), '2');
  assert.equal(plain.searchParams.get('x.permutation.run'), null);
  assert.equal(run.searchParams.get('x.permutation.run'), '1');
  // A figure's link: its chapter, its controls, its anchor.
  await page.locator('#fig-permutation select[data-control="pos"]').selectOption('rope');
  await page.waitForFunction(() => document.querySelector('#fig-permutation')?.dataset.state === 'ready', null, { timeout: 30000 });
  await page.locator('#fig-permutation button[data-act="fig-link"]').click();
  const fig = new URL(await page.locator('#fig-permutation input[data-link="figure"]').inputValue());
  assert.equal(fig.hash, '#fig-permutation');
  assert.equal(fig.searchParams.get('f.permutation.pos'), 'rope');
  assert.deepEqual([...fig.searchParams.keys()].filter((k) => k.startsWith('x.')), [], 'a figure link carries no experiment settings');
  await page.goto(fig.href.replace('chapter=4', 'chapter=1'));
  await page.waitForFunction(() => document.querySelector('#fig-permutation')?.dataset.state === 'ready', null, { timeout: 60000 });
  assert.equal(await page.evaluate(() => window.__attnlab.chapters().chapter), 4, 'the anchor wins over chapter=');
  assert.equal(await page.locator('#fig-permutation select[data-control="pos"]').inputValue(), 'rope');
  assert.ok(await inView('#fig-permutation'));
});

test('a chapter\'s URL carries no walkthrough or lab settings; they come back with their tab', async () => {
  await page.goto(`${b.url}?view=walk&lang=en&w.sentence=the+cat+sat&w.heads=1`);
  await page.evaluate(() => window.__attnlab.ready);
  await page.locator('nav.tabs button[data-view="lab"]').click();
  await page.locator('.lab-settings input[name="steps"]').fill('123');
  await page.locator('.lab-settings input[name="steps"]').dispatchEvent('input');
  assert.equal(new URL(page.url()).searchParams.get('steps'), '123');
  await page.locator('nav.tabs button[data-view="chapters"]').click();
  const chapters = new URL(page.url());
  const keys = [...chapters.searchParams.keys()];
  assert.deepEqual(keys.filter((k) => !['chapter', 'lang'].includes(k) && !k.startsWith('x.') && !k.startsWith('f.')), [], `chapter URL keys: ${keys}`);
  await page.locator('nav.tabs button[data-view="walk"]').click();
  const walk = new URL(page.url());
  assert.equal(walk.searchParams.get('w.sentence'), 'the cat sat');
  assert.equal(walk.searchParams.get('steps'), '123');
  assert.equal(walk.searchParams.get('chapter'), null);
});
