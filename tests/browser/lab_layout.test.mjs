// The lab's layout: on a phone the lab opened through its tab fits the screen; the loss chart's
// axis follows losses below 0.001 and draws nothing outside its plot; the engine badge stays one
// short header line with the explanation on hover.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { labUrl, launch, screenshot, settle, waitForLabPhase, waitForLabDone } from './support.mjs';

let b;
let page;
before(async () => {
  b = await launch({ isolation: false });
  // The walkthrough, which the first test opens again: the chapters (the landing view) start a
  // worker of their own, whose script request the next navigation would cut off.
  page = await b.newPage('?view=walk');
  await page.evaluate(() => window.__attnlab.ready);
});
after(async () => {
  await b?.close();
});

test('on a phone, the lab opened through its tab fits the screen (no sideways scroll)', async () => {
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(b.url + '?view=walk');
  await page.evaluate(() => window.__attnlab.ready);
  await page.locator('nav.tabs button[data-view="lab"]').click();
  await settle(page);
  await page.waitForTimeout(300);
  const r = await page.evaluate(() => ({
    scroll: document.scrollingElement.scrollWidth,
    side: document.querySelector('.lab-side').getBoundingClientRect().width,
    main: document.querySelector('.lab-main').getBoundingClientRect().right,
  }));
  assert.ok(r.scroll <= 390, `the page is ${r.scroll} px wide`);
  assert.ok(r.side <= 390 - 24, `the sidebar is ${r.side} px wide`);
  assert.ok(r.main <= 390, `the lab's main panel ends at ${r.main} px`);
  await screenshot(page, 'lab-phone');
});

test('the loss axis follows losses below 0.001, and the curve stays inside the plot', async () => {
  await page.setViewportSize({ width: 1366, height: 900 });
  await page.goto(b.url + labUrl({ task: 'copy', length: 2, vocab: 2, lr: 0.01, steps: 200, seed: 1 }));
  await page.evaluate(() => window.__attnlab.ready);
  await waitForLabPhase(page, 'idle');
  await page.locator('.lab button[data-act="train"]').click();
  await waitForLabDone(page, 120000);
  await settle(page);
  await page.waitForTimeout(200);
  const minLoss = await page.evaluate(() => Math.min(...window.__attnlab.lab().metrics.map((m) => m.loss)));
  assert.ok(minLoss < 1e-3, `the run reaches a loss below 0.001 (${minLoss})`);
  const r = await page.evaluate(() => {
    const fig = document.querySelector('figure[data-curve="loss"]');
    const svg = fig.querySelector('svg').getBoundingClientRect();
    const axis = fig.querySelector('g.xaxis').getBoundingClientRect();
    const path = fig.querySelector('path.line');
    const ticks = [...fig.querySelectorAll('g.yaxis .tick')].map((t) => Number(t.__data__));
    // The drawn line's lowest point, in page coordinates (clip or not).
    const box = path.getBoundingClientRect();
    return { axisTop: axis.top, lineBottom: box.bottom, svgTop: svg.top, lowestTick: Math.min(...ticks), clip: path.getAttribute('clip-path') };
  });
  // The axis reaches below the smallest loss: the curve's lowest point is drawn above the x-axis,
  // not on it (clamped) or under it (over the tick labels).
  assert.ok(r.lineBottom < r.axisTop - 2, `the curve's lowest point is at ${r.lineBottom} px, the x-axis at ${r.axisTop} px`);
  assert.ok(r.lowestTick < 1e-3, `the axis is labelled below 0.001 (lowest tick ${r.lowestTick})`);
  assert.match(r.clip ?? '', /^url\(#curve-clip-loss\)$/);
  await screenshot(page, 'lab-tiny-loss');
});

test('the single-threaded badge is one short header line; the reason is on hover', async () => {
  await page.setViewportSize({ width: 1366, height: 900 });
  await page.goto(b.url);
  await page.evaluate(() => window.__attnlab.ready);
  await settle(page);
  const r = await page.evaluate(() => {
    const badge = document.querySelector('[data-engine-badge]');
    const box = badge.getBoundingClientRect();
    const tabs = document.querySelector('nav.tabs').getBoundingClientRect();
    return { text: badge.textContent, title: badge.title, height: box.height, lineHeight: parseFloat(getComputedStyle(badge).lineHeight) || 16, badgeMid: box.top + box.height / 2, tabsMid: tabs.top + tabs.height / 2, header: document.querySelector('header.top').getBoundingClientRect().height };
  });
  assert.equal(r.text.startsWith('engine: single-threaded'), true, r.text);
  assert.ok(r.text.length <= 48, `badge text '${r.text}' is short`);
  assert.ok(r.height < 2 * r.lineHeight, `one line (height ${r.height})`);
  assert.ok(Math.abs(r.badgeMid - r.tabsMid) < 12, 'beside the tabs, not wrapped below them');
  assert.match(r.title, /not cross-origin isolated/);
});

test('no console errors or failed requests', () => {
  assert.deepEqual(b.problems, []);
});
