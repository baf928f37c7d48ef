// The Chapters tab: all ten chapters render from engine data and are read in order (prev / next);
// an experiment runs in its --quick form to its conclusion in the page without main-thread tasks
// over 50 ms of CPU; the language switch, a URL round-trip, a 360 px phone, dark mode and keyboard
// access to matrix cells. Prints the time until the first chapter is interactive and the gzipped
// download of the page and the engine.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { after, before, test } from 'node:test';
import { distDir, drawDeferredFigures, launch, settle, traceMainThreadTasks } from './support.mjs';

let b;
let page;
before(async () => {
  b = await launch({ isolation: true });
  page = await b.newPage('?lang=en');
});
after(async () => {
  await b?.close();
});

const state = () => page.evaluate(() => window.__attnlab.chapters());
const query = () => page.evaluate(() => Object.fromEntries(new URL(location.href).searchParams));
/** Waits until every figure of the chapter shown is drawn from engine data (§5 and §7 train a small model first), or deferred (a shipped-model figure not yet scrolled into view). */
async function figuresReady(p = page) {
  await p.waitForFunction(() => {
    const s = window.__attnlab?.chapters?.();
    return s && Object.values(s.figures).every((f) => f === 'ready' || f === 'deferred');
  }, null, { timeout: 90000, polling: 50 });
}

test('the page opens on the first chapter when the URL names no view', async () => {
  await figuresReady();
  assert.equal(await page.locator('#view-chapters').isVisible(), true);
  assert.equal(await page.locator('#view-walk').isHidden(), true);
  assert.equal(await page.locator('nav.tabs button[data-view="chapters"]').getAttribute('aria-selected'), 'true');
  assert.equal((await query()).view, undefined, 'the start view is not written into the link');
});

test('?view=walk, ?view=walkthrough and ?view=lab still open those tabs', async () => {
  const p = await b.context.newPage();
  for (const [asked, id] of [['walk', 'view-walk'], ['walkthrough', 'view-walk'], ['lab', 'view-lab'], ['chapters', 'view-chapters']]) {
    await p.goto(`${b.url}?view=${asked}&lang=en`);
    await p.waitForFunction((v) => !document.getElementById(v).hidden, id, { timeout: 10000 });
    const hidden = await p.evaluate(() => ['view-walk', 'view-lab', 'view-chapters'].filter((v) => document.getElementById(v).hidden));
    assert.deepEqual(hidden.sort(), ['view-walk', 'view-lab', 'view-chapters'].filter((v) => v !== id).sort(), `?view=${asked}`);
  }
  await p.close();
});

test('the first chapter is interactive soon after the page opens (measured; the target is 2 s)', async () => {
  // firstDrawnMs: when §1's figures were drawn from the engine's answer, in ms after navigation
  // start. The first page of a fresh profile (cold HTTP and compiled-code caches), then a reload.
  await figuresReady();
  const cold = (await state()).firstDrawnMs;
  assert.equal((await state()).chapter, 1);
  const p = await b.context.newPage();
  await p.goto(`${b.url}?lang=en`);
  await p.waitForFunction(() => window.__attnlab?.chapters?.().firstDrawnMs != null, null, { timeout: 90000, polling: 20 });
  const warm = await p.evaluate(() => window.__attnlab.chapters().firstDrawnMs);
  await p.close();
  console.log(`# first chapter interactive (engine answered, §1's figures drawn): ${cold.toFixed(0)} ms after navigation start (fresh profile), ${warm.toFixed(0)} ms on a second visit; target 2000 ms; load average ${loadavg().map((x) => x.toFixed(2)).join(' ')} on ${cpus().length} cores`);
  // A regression guard only (a page that hangs or waits on a trained figure), not the 2 s
  // target: the time depends on the machine's load, so the number is reported above.
  assert.ok(cold > 0 && cold < 20000, `regression guard: ${cold} ms`);
});

test('all ten chapters render in order, each with its figures and its experiments listed', async () => {
  await page.waitForFunction(() => document.querySelectorAll('section.experiment[data-available="1"], section.experiment[data-available="0"]').length > 0, null, { timeout: 30000 });
  const seen = [];
  for (let n = 1; n <= 10; n++) {
    await figuresReady();
    const s = await state();
    assert.equal(s.chapter, n);
    const title = await page.locator('article.chapter h2').textContent();
    seen.push(title);
    assert.match(title, new RegExp(`^${n}\\. \\S`));
    assert.match(await page.locator('article.chapter .counter').textContent(), new RegExp(`Chapter ${n} of 10 · article §`));
    const names = await page.$$eval('article.chapter section.experiment', (els) => els.map((e) => [e.dataset.experiment, e.dataset.available]));
    for (const [name, available] of names) {
      assert.ok(available === '1' || available === '0', `${name}: the engine's list was read`);
      if (available === '0') assert.match(await page.locator(`section.experiment[data-experiment="${name}"]`).textContent(), /not in this engine build/);
    }
    assert.equal((await query()).chapter, String(n));
    if (n < 10) {
      // Scrolling to Next would draw a shipped-model figure above it, which then grows and can
      // move Next from under the click: drawn first (chapters_text_figures tests the deferral).
      await drawDeferredFigures(page);
      await page.locator('nav.prevnext button.next').click();
      // The click's chapter first: until the page has handled it, the figures ready are this one's.
      await page.waitForFunction((next) => window.__attnlab.chapters().chapter === next, n + 1, { timeout: 30000, polling: 50 });
    }
  }
  assert.equal(await page.locator('nav.prevnext button.next').count(), 0, 'the last chapter has no next');
  assert.equal(await page.locator('article.chapter button[data-open="lab"]').count(), 1, '§10 leads into the lab');
  await page.locator('nav.toc button[data-chapter="2"]').click();
  assert.equal(await page.locator('article.chapter button[data-open="walk"]').count(), 1, '§2 leads into the walkthrough');
  assert.equal(new Set(seen).size, 10);
});

test('an experiment runs in its quick form to its conclusion, with no main-thread task over 50 ms of CPU', async () => {
  await page.locator('nav.toc button[data-chapter="4"]').click();
  await figuresReady();
  const panel = page.locator('section.experiment[data-experiment="permutation"]');
  await page.waitForFunction(() => document.querySelector('section.experiment[data-experiment="permutation"]')?.dataset.available === '1', null, { timeout: 30000 });
  assert.equal(await panel.locator('input[data-quick]').isChecked(), true, 'quick is the default');
  const t0 = Date.now();
  const tasks = await traceMainThreadTasks(page, async () => {
    await panel.locator('button[data-act="run"]').click();
    await page.waitForFunction(() => ['done', 'error'].includes(document.querySelector('section.experiment[data-experiment="permutation"]').dataset.phase), null, { timeout: 120000, polling: 250 });
  });
  console.log(`# permutation --quick in the page: ${Date.now() - t0} ms`);
  assert.equal(await panel.getAttribute('data-phase'), 'done', await panel.locator('.exp-status').textContent());
  assert.ok((await panel.locator('.exp-conclusion span').textContent()).length > 20, 'a conclusion');
  assert.ok((await panel.locator('.exp-table table').count()) > 0, 'result tables');
  assert.match(await panel.locator('.exp-command code').textContent(), /attnlab experiment permutation .*--batches 4/);
  // The verdict line is the engine's verdict in the reader's language, and so is the conclusion
  // (the engine's message rendered with i18n/results_zh.ts); CSV exports stay English.
  const verdict = await page.evaluate(() => window.__attnlab.chapters().results.permutation.verdict);
  assert.equal(verdict, 'held', 'permutation --quick: the claim held');
  const shownVerdict = () => panel.locator('.exp-verdict').evaluate((e) => ({ verdict: e.dataset.verdict, text: e.textContent }));
  assert.deepEqual(await shownVerdict(), { verdict, text: 'The claim held in this run.' });
  await page.locator('.lang-switch button[data-lang="zh"]').click();
  await settle(page);
  assert.deepEqual(await shownVerdict(), { verdict, text: '本次运行中论断成立。' });
  assert.match(await panel.locator('.exp-conclusion span').textContent(), /^论断成立：无：置换等变（相对差距 /);
  assert.equal(await panel.locator('.exp-table th').first().textContent(), '位置编码');
  await page.locator('.lang-switch button[data-lang="en"]').click();
  await settle(page);
  assert.equal((await shownVerdict()).text, 'The claim held in this run.');
  assert.equal(await panel.locator('.exp-conclusion span').textContent(), await page.evaluate(() => window.__attnlab.chapters().results.permutation.conclusion));
  const download = page.waitForEvent('download');
  await panel.locator('button[data-act="csv"]').click();
  const csv = readFileSync(await (await download).path(), 'utf8');
  assert.match(csv, /^# /, 'CSV starts with a table name');
  assert.deepEqual(tasks.filter((t) => t.cpuMs > 50), [], 'main-thread tasks over 50 ms of CPU while the experiment ran');
});

test('drawing the largest chapters (§4, §6) has no main-thread task over 50 ms of CPU', async () => {
  const tasks = await traceMainThreadTasks(page, async () => {
    for (const n of [4, 6, 4]) {
      await page.locator(`nav.toc button[data-chapter="${n}"]`).click();
      await figuresReady();
    }
  });
  assert.deepEqual(tasks.filter((t) => t.cpuMs > 50), [], 'main-thread tasks over 50 ms of CPU');
});

test('a started experiment can be stopped, and a new run starts afterwards', async () => {
  await page.locator('nav.toc button[data-chapter="6"]').click();
  const panel = page.locator('section.experiment[data-experiment="mask"]');
  await page.waitForFunction(() => document.querySelector('section.experiment[data-experiment="mask"]')?.dataset.available === '1', null, { timeout: 30000 });
  await panel.locator('button[data-act="run"]').click();
  await page.waitForFunction(() => /step/.test(document.querySelector('section.experiment[data-experiment="mask"] .exp-status')?.textContent ?? ''), null, { timeout: 60000 });
  assert.match(await panel.locator('.exp-status').textContent(), /about \d+ s left|step/);
  await panel.locator('button[data-act="stop"]').click();
  await page.waitForFunction(() => document.querySelector('section.experiment[data-experiment="mask"]').dataset.phase === 'stopped', null, { timeout: 10000 });
  assert.equal(await panel.locator('button[data-act="run"]').isEnabled(), true);
});

test('changing an experiment setting with the keyboard keeps the focus on the control', async () => {
  await page.locator('nav.toc button[data-chapter="6"]').click();
  await page.waitForFunction(() => document.querySelector('section.experiment[data-experiment="mask"]')?.dataset.available === '1', null, { timeout: 30000 });
  const panel = page.locator('section.experiment[data-experiment="mask"]');
  const active = () => page.evaluate(() => ({ param: document.activeElement?.dataset.param ?? null, quick: document.activeElement?.dataset.quick !== undefined }));
  // The quick checkbox, toggled with Space: focus stays, and the sizes show the new base values.
  await panel.locator('input[data-quick]').focus();
  const quickSteps = await panel.locator('input[data-param="steps"]').inputValue();
  await page.keyboard.press('Space');
  assert.deepEqual(await active(), { param: null, quick: true });
  assert.equal(await panel.locator('input[data-quick]').isChecked(), false);
  assert.notEqual(await panel.locator('input[data-param="steps"]').inputValue(), quickSteps, 'steps shows its default');
  await page.keyboard.press('Space');
  assert.equal(await panel.locator('input[data-quick]').isChecked(), true);
  // A number typed, then Enter: focus stays; then Tab moves on to the next control.
  await panel.locator('input[data-param="steps"]').focus();
  await page.keyboard.press('Control+a');
  await page.keyboard.type('31');
  await page.keyboard.press('Enter');
  await page.keyboard.press('Tab');
  // The next control shown after steps (the folded "More settings" are not in the Tab order).
  const shown = await panel.locator('[data-param], [data-quick]').evaluateAll((els) => els.filter((e) => e.checkVisibility()).map((e) => ({ param: e.dataset.param ?? null, quick: e.dataset.quick !== undefined })));
  assert.deepEqual(await active(), shown[shown.findIndex((c) => c.param === 'steps') + 1], 'Tab after a change reaches the next control');
  assert.equal((await query())['x.mask.steps'], '31');
  assert.match(await panel.locator('input[data-param="steps"]').evaluate((e) => e.closest('label').className), /changed/);
  await panel.locator('button[data-act="reset"]').click();
});

test('the language switch keeps the chapter; the Chinese chapter uses the usual terms', async () => {
  await page.locator('nav.toc button[data-chapter="2"]').click();
  await page.locator('.lang-switch button[data-lang="zh"]').click();
  await settle(page);
  const q = await query();
  assert.equal(q.lang, 'zh');
  assert.equal(q.chapter, '2');
  assert.equal(await page.locator('article.chapter h2').textContent(), '2. 查询、键、值与缩放');
  assert.match(await page.locator('article.chapter').textContent(), /缩放点积/);
  assert.match(await page.locator('article.chapter .counter').textContent(), /第 2 章，共 10 章 · 文章 §2\.1–2\.3/);
  assert.equal(await page.locator('nav.tabs button[data-view="chapters"]').textContent(), '章节');
  // The experiments' fixed texts in Chinese (i18n/experiments_zh.ts).
  await page.waitForFunction(() => document.querySelector('section.experiment[data-experiment="scaling"]')?.dataset.available === '1', null, { timeout: 30000 });
  assert.match(await page.locator('section.experiment[data-experiment="scaling"] .exp-claim').textContent(), /^论断: §2\.2：不除以 √d_k/);
  assert.match(await page.locator('section.experiment[data-experiment="scaling"] label.field').first().textContent(), /[\u4e00-\u9fff].*--/);
  await page.locator('.lang-switch button[data-lang="en"]').click();
  await settle(page);
  assert.equal(await page.locator('article.chapter h2').textContent(), '2. Queries, keys, values and the scaling');
});

test('a link reproduces the view: chapter, figure controls and experiment parameters', async () => {
  await page.locator('nav.toc button[data-chapter="6"]').click();
  await figuresReady();
  await page.locator('[data-figure="fp16"] select[data-control="size"]').selectOption('64');
  await figuresReady();
  const panel = page.locator('section.experiment[data-experiment="mask"]');
  await panel.locator('input[data-quick]').uncheck();
  await panel.locator('input[data-param="steps"]').fill('77');
  await panel.locator('input[data-param="steps"]').dispatchEvent('change');
  const q = await query();
  assert.equal(q['f.fp16.size'], '64');
  assert.equal(q['x.mask.quick'], '0');
  assert.equal(q['x.mask.steps'], '77');
  const link = page.url();
  const p2 = await b.context.newPage();
  await p2.goto(link);
  await figuresReady(p2);
  assert.equal(await p2.evaluate(() => window.__attnlab.chapters().chapter), 6);
  assert.equal(await p2.locator('[data-figure="fp16"] select[data-control="size"]').inputValue(), '64');
  await p2.waitForFunction(() => document.querySelector('section.experiment[data-experiment="mask"]')?.dataset.available === '1', null, { timeout: 30000 });
  assert.equal(await p2.locator('section.experiment[data-experiment="mask"] input[data-param="steps"]').inputValue(), '77');
  assert.equal(await p2.locator('section.experiment[data-experiment="mask"] input[data-quick]').isChecked(), false);
  await p2.close();
});

test('a 360 px phone: no sideways scrolling of the page, the chapter readable', async () => {
  const p = await b.context.newPage();
  await p.setViewportSize({ width: 360, height: 740 });
  await p.goto(`${b.url}?view=chapters&chapter=4&lang=zh`);
  await figuresReady(p);
  const w = await p.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(w <= 361, `page ${w} px wide at 360`);
  const box = await p.locator('article.chapter').boundingBox();
  assert.ok(box.width >= 320 && box.x >= 0, `article ${box.width} px at x ${box.x}`);
  await p.close();
});

test('dark mode follows prefers-color-scheme and keeps the colour-blind-safe scales', async () => {
  // A browser whose reader prefers dark (firefox-esr's BiDi cannot emulate it for one page).
  const dark = await launch({ isolation: true, colorScheme: 'dark' });
  try {
    const p = await dark.newPage('?view=chapters&chapter=6');
    await figuresReady(p);
    const bg = await p.evaluate(() => getComputedStyle(document.body).backgroundColor);
    const [r, g, bl] = bg.match(/\d+/g).map(Number);
    assert.ok(r + g + bl < 120, `dark background, got ${bg}`);
    // The weights stay on viridis: its darkest colour is #440154 (rgb(68, 1, 84)).
    const fills = await p.$$eval('figure[data-matrix="mask-weights"] g.cell rect', (rs) => rs.map((e) => e.getAttribute('fill')));
    assert.ok(fills.some((f) => /#440154|rgb\(68, 1, 84\)/.test(f)), `viridis fills: ${fills.slice(0, 4)}`);
  } finally {
    await dark.close();
  }
});

test('keyboard focus on a matrix cell shows its exact value in the tooltip', async () => {
  await page.locator('nav.toc button[data-chapter="6"]').click();
  await figuresReady();
  const cell = page.locator('figure[data-matrix="mask-causal"] g.cell[tabindex="0"]');
  await cell.focus();
  await settle(page);
  const tip = page.locator('#attnlab-tooltip');
  assert.equal(await tip.isVisible(), true);
  const v = await cell.getAttribute('data-value');
  assert.ok((await tip.textContent()).includes(v.replace('-', '−')) || (await tip.textContent()).includes(v), `tooltip shows ${v}`);
  assert.match(await page.locator('figure[data-matrix="mask-causal"] svg').getAttribute('aria-label'), /causal mask: a 6 by 6 matrix/);
});

test('download: the page and the engine, gzipped', () => {
  const walk = (dir) => readdirSync(dir).flatMap((f) => (statSync(join(dir, f)).isDirectory() ? walk(join(dir, f)) : [join(dir, f)]));
  const gz = (f) => gzipSync(readFileSync(f), { level: 9 }).length;
  const files = walk(distDir).filter((f) => !f.endsWith('.map')); // source maps load only in developer tools
  const sum = (pred) => files.filter(pred).reduce((a, f) => a + gz(f), 0);
  const page = sum((f) => /index\.html$|\/assets\//.test(f));
  const engine = sum((f) => /\/engine\/loader\.mjs$|\/wasm\/threads\//.test(f));
  const single = sum((f) => /\/wasm\/single\//.test(f));
  console.log(`# download (gzip -9): page ${(page / 1024).toFixed(0)} KiB + engine (threads) ${(engine / 1024).toFixed(0)} KiB = ${((page + engine) / 1024).toFixed(0)} KiB; single-threaded engine instead: ${(single / 1024).toFixed(0)} KiB`);
  assert.ok(page + engine <= 2 * 1024 * 1024, 'page + engine within 2 MB gzipped');
});
