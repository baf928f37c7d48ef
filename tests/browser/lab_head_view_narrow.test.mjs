// The head view on a 360 px screen: after training, the lab's attention maps and the BertViz-style
// head view fit the screen (no sideways page scroll); the head view keeps its query and key columns
// side by side and scrolls inside its own box when it is wider than the screen.
//   node --test tests/browser/lab_head_view_narrow.test.mjs
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { labUrl, launch, screenshot, settle, waitForLabDone } from './support.mjs';

const WIDTH = 360;
let b;
let page;
before(async () => {
  b = await launch({ isolation: true });
  // One navigation only: a second one would cut off the first page's engine while it loads.
  page = await b.newPage(labUrl({ task: 'reverse', length: 10, vocab: 8, layers: 1, dModel: 16, heads: 2, kvHeads: 2, steps: 10, batch: 8, seed: 1 }));
  await page.setViewportSize({ width: WIDTH, height: 780 });
  await page.evaluate(() => window.__attnlab.ready);
});
after(async () => {
  await b?.close();
});

test('at 360 px the head view and the maps fit the screen; the head view scrolls in its own box', async () => {
  await page.locator('.lab button[data-act="train"]').click();
  await waitForLabDone(page, 120000);
  await page.locator('section.head-view').waitFor({ state: 'visible' });
  await page.waitForFunction(() => document.querySelectorAll('section.head-view line.attn').length > 0);
  await settle(page);
  const r = await page.evaluate(() => {
    const hv = document.querySelector('section.head-view');
    const box = hv.getBoundingClientRect();
    const q = document.querySelector('section.head-view text.tok-q').getBoundingClientRect();
    const k = document.querySelector('section.head-view text.tok-k').getBoundingClientRect();
    return {
      page: document.scrollingElement.scrollWidth,
      right: box.right,
      maps: document.querySelector('.lab-maps').getBoundingClientRect().right,
      ownScroll: hv.scrollWidth,
      own: hv.clientWidth,
      overflow: getComputedStyle(hv).overflowX,
      columns: { q: q.left, k: k.left, qTop: q.top, kTop: k.top },
    };
  });
  assert.ok(r.page <= WIDTH, `the page is ${r.page} px wide`);
  assert.ok(r.right <= WIDTH, `the head view ends at ${r.right} px`);
  assert.ok(r.maps <= WIDTH, `the maps end at ${r.maps} px`);
  assert.ok(r.ownScroll <= r.own || r.overflow === 'auto', `a head view wider than its box (${r.ownScroll} > ${r.own}) scrolls inside it`);
  assert.ok(r.columns.k > r.columns.q && Math.abs(r.columns.kTop - r.columns.qTop) < 1, 'queries and keys stay in two columns side by side');
  await page.locator('section.head-view').scrollIntoViewIfNeeded();
  await screenshot(page, 'lab-head-view-360');
});

test('no console errors or failed requests', () => {
  assert.deepEqual(b.problems, []);
});
