// What a learner reads in an experiment's results: the live chart draws every run with its own key
// and no error; tables are titled in words; every chart's tick and axis labels lie inside its
// drawing; no two lines of a chart share a colour and dash; an exported SVG or PNG carries the
// figure's title, legend and axis labels. One quick run of §9's normalizer experiment (three
// training runs, a result chart with three lines).
//   node --test tests/browser/learner_results.test.mjs
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { launch } from './support.mjs';

let b;
let page;
const panel = () => page.locator('section.experiment[data-experiment="normalizer"]');
before(async () => {
  b = await launch({ isolation: true });
  page = await b.newPage('?chapter=9&lang=en');
  await page.waitForFunction(() => document.querySelector('section.experiment[data-experiment="normalizer"]')?.dataset.available === '1', null, { timeout: 90000, polling: 100 });
});
after(async () => {
  await b?.close();
});

/** Each chart's lines (stroke + dash) and keys, and every text of its SVG outside the SVG's box. */
const charts = (scope) =>
  page.$$eval(`${scope} figure[data-chart]`, (figs) =>
    figs.map((f) => {
      const svg = f.querySelector('svg').getBoundingClientRect();
      const outside = Array.from(f.querySelectorAll('svg text'))
        .filter((t) => t.textContent.trim())
        .map((t) => ({ text: t.textContent, r: t.getBoundingClientRect() }))
        .filter(({ r }) => r.left < svg.left - 0.5 || r.right > svg.right + 0.5 || r.top < svg.top - 0.5 || r.bottom > svg.bottom + 0.5)
        .map(({ text }) => text);
      return {
        name: f.dataset.chart,
        lines: Array.from(f.querySelectorAll('g.lines path'), (p) => `${p.getAttribute('stroke')} ${p.getAttribute('stroke-dasharray') ?? ''}`),
        keys: Array.from(f.querySelectorAll('.hist-keys > span'), (k) => k.textContent),
        outside,
      };
    }),
  );

test('the live chart keys every run, without an error; tables are titled in words; labels fit', async () => {
  const before = b.problems.length;
  await panel().locator('button[data-act="run"]').click();
  // While it runs: the live chart's legend has one key per line drawn, and more than one line.
  await page.waitForFunction(() => {
    const f = document.querySelector('section.experiment[data-experiment="normalizer"] .exp-live figure[data-chart]');
    const lines = f?.querySelectorAll('g.lines path').length ?? 0;
    return lines >= 2 && f.querySelectorAll('.hist-keys > span').length === lines;
  }, null, { timeout: 120000, polling: 50 });
  const live = await charts('section.experiment[data-experiment="normalizer"] .exp-live');
  assert.deepEqual(live[0].keys.slice(0, live[0].lines.length).length, live[0].lines.length);
  await page.waitForFunction(() => ['done', 'error'].includes(document.querySelector('section.experiment[data-experiment="normalizer"]').dataset.phase), null, { timeout: 120000, polling: 100 });
  assert.equal(await panel().getAttribute('data-phase'), 'done');
  assert.deepEqual(b.problems.slice(before).filter((p) => /HierarchyRequestError|page error/.test(p)), [], 'no error while the live chart drew');

  const r = await page.evaluate(() => window.__attnlab.chapters().results.normalizer);
  const captions = await panel().locator('.exp-table caption').allTextContents();
  assert.equal(captions.length, r.tables.length);
  for (const c of captions) {
    assert.doesNotMatch(c, /_/, `caption "${c}" is words`);
    assert.match(c, /^[A-Z]/, `caption "${c}" starts as a title`);
  }
  assert.ok(!captions.includes('final'), 'the table "final" has a title');

  const shown = await charts('section.experiment[data-experiment="normalizer"] .exp-series');
  assert.ok(shown.length >= 1, 'a result chart');
  for (const title of await panel().locator('.exp-series figure[data-chart] figcaption').allTextContents()) {
    assert.match(title, /^[A-Z][^_]*$/, `chart title "${title}" is words`);
  }
  for (const c of shown) {
    assert.deepEqual(c.outside, [], `${c.name}: labels inside the drawing`);
    assert.equal(new Set(c.lines).size, c.lines.length, `${c.name}: no two lines drawn alike (${c.lines.join(' | ')})`);
    assert.equal(c.keys.length, c.lines.length, `${c.name}: one key per line`);
  }
});

test('an exported SVG and PNG carry the title, the legend and the axis labels', async () => {
  const cell = 'section.experiment[data-experiment="normalizer"] .exp-series > .fig-cell:first-child';
  const fig = page.locator(cell);
  const shown = await fig.evaluate((cell) => ({
    title: cell.querySelector('figcaption').textContent.trim(),
    keys: Array.from(cell.querySelectorAll('.hist-keys > span'), (k) => k.textContent.trim()),
    // An axis label of several lines (tspans) reads as its lines joined by spaces.
    x: [...cell.querySelectorAll('text.xlabel tspan')].map((t) => t.textContent).join(' ') || cell.querySelector('text.xlabel').textContent,
    y: [...cell.querySelectorAll('text.ylabel tspan')].map((t) => t.textContent).join(' ') || cell.querySelector('text.ylabel').textContent,
    width: cell.querySelector('svg').width.baseVal.value,
    height: cell.querySelector('svg').height.baseVal.value,
  }));
  const [svgFile] = await Promise.all([page.waitForEvent('download'), page.locator(`${cell} button[data-export="svg"]`).click()]);
  const svg = readFileSync(await svgFile.path(), 'utf8');
  const unescape = (s) => s.replace(/&#(\d+);/g, (_, c) => String.fromCharCode(Number(c))).replace(/&amp;/g, '&').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"');
  const texts = [...svg.matchAll(/<text[^>]*>(.*?)<\/text>/g)].map((m) => unescape(m[1].replace(/<\/tspan><tspan[^>]*>/g, ' ').replace(/<[^>]+>/g, '')));
  for (const want of [shown.title, shown.x, shown.y, ...shown.keys]) assert.ok(texts.includes(want), `the SVG file has "${want}" (${texts.join(' | ')})`);
  const [pngFile] = await Promise.all([page.waitForEvent('download'), page.locator(`${cell} button[data-export="png"]`).click()]);
  const png = readFileSync(await pngFile.path());
  assert.equal(png.subarray(1, 4).toString(), 'PNG');
  // Twice the figure's size: the drawing plus the title above it and the keys below.
  const w = png.readUInt32BE(16);
  const h = png.readUInt32BE(20);
  assert.ok(w >= 2 * shown.width && h > 2 * shown.height + 40, `PNG ${w}×${h} holds more than the ${shown.width}×${shown.height} drawing`);
  // Its pixels: text in the title's band above the drawing, and below it each key's line in its
  // own colour beside its text (the drawing's band is the figure itself).
  const bands = await page.evaluate(async ({ base64, drawing }) => {
    const bitmap = await createImageBitmap(new Blob([Uint8Array.from(atob(base64), (c) => c.charCodeAt(0))], { type: 'image/png' }));
    const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
    const ctx = canvas.getContext('2d');
    ctx.drawImage(bitmap, 0, 0);
    const band = (y0, y1) => {
      const d = ctx.getImageData(0, y0, bitmap.width, y1 - y0).data;
      const [r0, g0, b0] = d; // the background, at the band's first pixel
      let ink = 0;
      const colours = new Set();
      for (let i = 0; i < d.length; i += 4) {
        const [r, g, b] = [d[i], d[i + 1], d[i + 2]];
        if (Math.abs(r - r0) + Math.abs(g - g0) + Math.abs(b - b0) < 120) continue;
        ink++;
        // A saturated pixel belongs to a key's line (text is grey): its hue, coarsely.
        if (Math.max(r, g, b) - Math.min(r, g, b) > 90) colours.add(`${r >> 5},${g >> 5},${b >> 5}`);
      }
      return { ink, colours: colours.size };
    };
    const titleBottom = 2 * 22;
    return { title: band(0, titleBottom), keys: band(titleBottom + 2 * drawing, bitmap.height) };
  }, { base64: png.toString('base64'), drawing: shown.height });
  assert.ok(bands.title.ink > 200, `the PNG's title band has text (${bands.title.ink} ink pixels)`);
  assert.ok(bands.keys.ink > 200, `the PNG's key band has text (${bands.keys.ink} ink pixels)`);
  assert.ok(bands.keys.colours >= shown.keys.length, `the PNG's key band has a colour per key (${bands.keys.colours} for ${shown.keys.length} keys)`);
});
