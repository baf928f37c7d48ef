// Every experiment a chapter lists runs in the page in its --quick form to its conclusion: one page,
// the chapters opened in order, each experiment's Run pressed with the quick sizes it starts with.
// The page's verdict line, conclusion, result tables, series charts and CLI command are the result
// object the experiments' worker returned (window.__attnlab.chapters().results), the command names
// the quick sizes, no main-thread task exceeds 50 ms of CPU while an experiment runs, and for the experiments
// whose numbers involve no clock a separate engine in the page (the JS experiment API,
// lab.runExperiment) gives the same verdict, conclusion and tables for the same parameters. Prints each
// experiment's seconds in the page. On the Chinese page (?lang=zh) a run's conclusion, timing line,
// table captions and headers and chart titles and axis labels are Chinese (i18n/results_zh.ts),
// with no English sentence left; switched back to English they are the engine's texts again.
import assert from 'node:assert/strict';
import { loadavg } from 'node:os';
import { after, before, test } from 'node:test';
import { drawDeferredFigures, launch, loadReferenceEngine, settle, traceMainThreadTasks } from './support.mjs';

let b;
let page;
before(async () => {
  b = await launch({ isolation: true });
  page = await b.newPage('?view=chapters&chapter=1&lang=en');
});
after(async () => {
  await b?.close();
});

/**
 * Experiments re-run with the reference engine: quick in both builds (each well under 2 s) and
 * free of wall-clock columns. The others are checked against the worker's own result object.
 */
const RERUN = ['permutation', 'fp16', 'importance', 'mask', 'normalizer', 'tie-qk'];

/**
 * The verdicts of the quick forms tuned to show their claim (the native tests check their
 * numbers); heads' quick form leaves out d_model 512 and says so, offering the full run.
 */
const QUICK_VERDICT = { positional: 'held', lstm: 'held', variants: 'held', fp16: 'held', heads: 'untested', induction: 'held' };

/** Opens chapter n with every figure drawn (drawDeferredFigures: none loads while a run is clicked). */
async function chapterReady(n) {
  await page.locator(`nav.toc button[data-chapter="${n}"]`).click();
  await page.waitForFunction((n) => {
    const s = window.__attnlab?.chapters?.();
    return s && s.chapter === n && Object.values(s.figures).every((f) => f === 'ready' || f === 'deferred') &&
      [...document.querySelectorAll('section.experiment')].every((e) => e.dataset.available !== '');
  }, n, { timeout: 90000, polling: 100 });
  await drawDeferredFigures(page);
}

/** What the panel shows after a run: conclusion, tables (caption, header, cells), chart count, command. */
const shownResult = (name) =>
  page.$eval(`section.experiment[data-experiment="${name}"]`, (el) => ({
    phase: el.dataset.phase,
    status: el.querySelector('.exp-status')?.textContent ?? '',
    conclusion: el.querySelector('.exp-conclusion span')?.textContent ?? null,
    verdict: el.querySelector('.exp-verdict')?.dataset.verdict ?? null,
    tables: Array.from(el.querySelectorAll('.exp-table table'), (t) => ({
      name: t.dataset.table,
      columns: Array.from(t.querySelectorAll('thead th'), (c) => c.textContent),
      rows: Array.from(t.querySelectorAll('tbody tr'), (r) => Array.from(r.querySelectorAll('td'), (c) => c.textContent)),
    })),
    charts: el.querySelectorAll('.exp-series figure[data-chart]').length,
    command: el.querySelector('.exp-command code')?.textContent ?? null,
    same: el.querySelector('.exp-same')?.textContent ?? null,
  }));

const show = (v) => (Array.isArray(v) ? v.join(',') : String(v));

test('every chapter\'s experiments run in their --quick form to the conclusion the engine returns', async () => {
  const t0 = Date.now();
  await loadReferenceEngine(page);
  const infos = Object.fromEntries(await page.evaluate(() => window.__refLab.experiments().map((e) => [e.name, JSON.parse(JSON.stringify(e))])));
  const seconds = {};
  let listed = 0;
  for (let n = 1; n <= 10; n++) {
    await chapterReady(n);
    const names = await page.$$eval('article.chapter section.experiment', (els) => els.map((e) => e.dataset.experiment));
    for (const name of names) {
      listed++;
      const info = infos[name];
      assert.ok(info, `§${n} lists ${name}, which the engine has`);
      const panel = page.locator(`section.experiment[data-experiment="${name}"]`);
      assert.equal(await panel.getAttribute('data-available'), '1', name);
      assert.equal(await panel.locator('input[data-quick]').isChecked(), true, `${name}: quick is the default`);
      const started = Date.now();
      const tasks = await traceMainThreadTasks(page, async () => {
        await panel.locator('button[data-act="run"]').click();
        await page.waitForFunction((name) => ['done', 'error', 'stopped'].includes(document.querySelector(`section.experiment[data-experiment="${name}"]`).dataset.phase), name, { timeout: 120000, polling: 250 })
          .catch(async (e) => {
            const s = await shownResult(name);
            throw new Error(`${name}: not finished after 120 s (phase '${s.phase ?? ''}', status '${s.status}'): ${e.message}`);
          });
      });
      seconds[name] = (Date.now() - started) / 1000;
      const s = await shownResult(name);
      assert.equal(s.phase, 'done', `${name}: ${s.status}`);
      assert.deepEqual(tasks.filter((t) => t.cpuMs > 50), [], `${name}: main-thread tasks over 50 ms of CPU while it ran`);

      // The page shows the worker's result object.
      const r = await page.evaluate((name) => window.__attnlab.chapters().results[name], name);
      assert.ok(r, `${name}: the worker's result`);
      assert.equal(s.conclusion, r.conclusion, `${name}: conclusion`);
      assert.equal(s.verdict, r.verdict, `${name}: verdict`);
      assert.ok(['held', 'partly', 'not_held', 'untested'].includes(r.verdict), `${name}: verdict ${r.verdict}`);
      assert.ok(r.conclusion.length > 20, `${name}: a conclusion`);
      assert.deepEqual(s.tables, r.tables.map((t) => ({ name: t.name, columns: t.columns, rows: t.rows })), `${name}: result tables`);
      assert.ok(s.tables.length > 0, `${name}: at least one table`);
      assert.equal(s.charts, r.series.length, `${name}: one chart per series`);
      assert.equal(s.command, r.command, `${name}: command`);
      assert.match(s.same ?? '', /--isa wasm .* bit for bit.* sin and cos/, `${name}: the page says what the command reproduces and what could differ`);
      if (name in QUICK_VERDICT) assert.equal(r.verdict, QUICK_VERDICT[name], `${name}: ${r.conclusion}`);
      // A quick run that did not test the claim offers the full run, and its timing line says
      // how long that takes here.
      assert.equal(await panel.locator('.exp-result button[data-act="full"]').count(), r.verdict === 'untested' ? 1 : 0, `${name}: full-run button`);
      if (name === 'heads') assert.match(r.timing, /the full run .* takes about \d+ s here/, `${name}: ${r.timing}`);
      // It ran with the quick sizes: the command states every parameter's quick (or default) value.
      for (const p of info.parameters) {
        const v = show(p.name in info.quick ? info.quick[p.name] : p.default);
        assert.ok(s.command.includes(`${p.flag} ${v}`), `${name}: ${p.flag} ${v} in "${s.command}"`);
      }

      // The JS experiment API with the same parameters gives the same numbers.
      if (RERUN.includes(name)) {
        const ref = await page.evaluate((name) => {
          const x = window.__refLab.runExperiment(name, { quick: true }, () => {});
          return { conclusion: x.conclusion, verdict: x.verdict, tables: x.tables.map((t) => ({ name: t.name, columns: t.columns, rows: t.rows })), command: x.command };
        }, name);
        assert.equal(s.conclusion, ref.conclusion, `${name}: the engine's conclusion`);
        assert.equal(s.verdict, ref.verdict, `${name}: the engine's verdict`);
        assert.deepEqual(s.tables, ref.tables, `${name}: the engine's tables`);
        // The reference module runs on its own thread count, which the command names last.
        const threadless = (c) => c.replace(/ --threads \d+$/, '');
        assert.equal(threadless(s.command), threadless(ref.command), `${name}: the engine's command`);
      }
    }
  }
  assert.equal(listed, Object.keys(seconds).length);
  assert.ok(listed >= 15, `${listed} experiments listed in the chapters`);
  const total = Object.values(seconds).reduce((a, x) => a + x, 0);
  console.log(`# experiments --quick in the page (s): ${Object.entries(seconds).map(([k, v]) => `${k} ${v.toFixed(1)}`).join(', ')}; runs ${total.toFixed(1)} s, test ${((Date.now() - t0) / 1000).toFixed(1)} s; load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
});

// Three English words in a row: a sentence (or most of one) left in English.
const ENGLISH = /\b[A-Za-z]{2,} [A-Za-z]{2,} [A-Za-z]{2,}\b/;
const HAN = /[\u4e00-\u9fff]/;

test('on the Chinese page a run\'s conclusion, timing, tables and charts are Chinese', async () => {
  // cost --quick: a second or two, with a table, a chart and a timing line.
  const t0 = Date.now();
  await page.locator('.lang-switch button[data-lang="zh"]').click();
  await settle(page);
  await chapterReady(3);
  const panel = page.locator('section.experiment[data-experiment="cost"]');
  await panel.locator('button[data-act="run"]').click();
  await page.waitForFunction(() => ['done', 'error'].includes(document.querySelector('section.experiment[data-experiment="cost"]').dataset.phase), null, { timeout: 60000, polling: 100 });
  const shown = () => panel.evaluate((el) => ({
    phase: el.dataset.phase,
    conclusion: el.querySelector('.exp-conclusion span')?.textContent ?? '',
    timing: el.querySelector('.exp-timing')?.textContent ?? '',
    captions: Array.from(el.querySelectorAll('.exp-table caption'), (c) => c.textContent),
    columns: Array.from(el.querySelectorAll('.exp-table thead th'), (c) => c.textContent),
    titles: Array.from(el.querySelectorAll('.exp-series figure[data-chart] figcaption'), (c) => c.textContent),
    axes: Array.from(el.querySelectorAll('.exp-series figure[data-chart] text.xlabel, .exp-series figure[data-chart] text.ylabel'), (c) => c.textContent),
  }));
  const r = await page.evaluate(() => window.__attnlab.chapters().results.cost);
  const zh = await shown();
  assert.equal(zh.phase, 'done');
  assert.ok(zh.titles.length > 0 && zh.axes.length > 0 && zh.captions.length > 0, 'a table and a chart');
  for (const [what, texts] of Object.entries({ conclusion: [zh.conclusion], timing: [zh.timing], captions: zh.captions, titles: zh.titles, axes: zh.axes })) {
    for (const text of texts) {
      assert.match(text, HAN, `${what}: "${text}" is Chinese`);
      assert.doesNotMatch(text, ENGLISH, `${what}: no English sentence in "${text}"`);
    }
  }
  // Every column the engine names with a word (not notation such as "h") is Chinese.
  r.tables[0].columns.forEach((c, i) => {
    if (/[a-z]{3,}/.test(c)) assert.match(zh.columns[i], HAN, `column "${c}" shown as "${zh.columns[i]}"`);
  });
  assert.notEqual(zh.conclusion, r.conclusion);

  await page.locator('.lang-switch button[data-lang="en"]').click();
  await settle(page);
  const en = await shown();
  assert.equal(en.conclusion, r.conclusion, 'English: the engine\'s conclusion');
  assert.equal(en.timing.endsWith(r.timing), true, 'English: the engine\'s timing line');
  assert.deepEqual(en.columns, r.tables.flatMap((t) => t.columns), 'English: the engine\'s columns');
  // Chart titles are words: one per series, none an engine identifier.
  assert.equal(en.titles.length, r.series.length, 'English: one title per series');
  for (const title of en.titles) assert.match(title, /^[A-Z][^_]*$/, `English: chart title "${title}" is words`);
  console.log(`# cost --quick on the Chinese page and back: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
});
