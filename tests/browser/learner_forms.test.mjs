// Forms a learner reads: every experiment parameter has a label in words and a one-line help shown
// without hover, in English and Chinese, the flag small beside it, the measurement's sizes folded
// under "More settings"; → after clicking the Walkthrough tab moves to the next step; Train pressed
// while the engine still loads waits for it instead of failing; "Train again with ..." starts from
// the baseline run, so each variant differs from it in one setting, and the comparison names the
// settings as the form does.
//   node --test tests/browser/learner_forms.test.mjs
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { BROWSER, labUrl, launch, waitForLabDone, waitForLabPhase, waitForLabSteps, waitForWalkthrough } from './support.mjs';

let b;
let page;
before(async () => {
  b = await launch({ isolation: true });
  page = await b.newPage('?chapter=6&lang=en');
});
after(async () => {
  await b?.close();
});

const HAN = /[\u4e00-\u9fff]/;

/** Every parameter field of an experiment: label words, flag, help, shown or folded. */
const fields = (name) =>
  page.$$eval(`section.experiment[data-experiment="${name}"] label.field:has([data-param])`, (labels) =>
    labels.map((l) => ({
      param: l.querySelector('[data-param]').dataset.param,
      words: l.querySelector('.param-label')?.firstChild?.textContent.trim() ?? '',
      flag: l.querySelector('.param-label code.flag')?.textContent ?? null,
      help: l.querySelector('.param-help')?.textContent.trim() ?? '',
      folded: Boolean(l.closest('details.exp-more')),
      helpShown: (() => {
        const h = l.querySelector('.param-help');
        return Boolean(h) && (l.closest('details.exp-more') ? true : h.checkVisibility() && h.getBoundingClientRect().height > 0);
      })(),
    })),
  );

test('every experiment parameter has a label, a visible help line and its flag; sizes fold under More settings', async () => {
  const wait = (name) => page.waitForFunction((n) => document.querySelector(`section.experiment[data-experiment="${n}"]`)?.dataset.available === '1', name, { timeout: 90000, polling: 100 });
  await wait('mask');
  const info = await page.evaluate(() => window.__attnlab.chapters());
  assert.ok(info);
  for (const lang of ['en', 'zh']) {
    if (lang === 'zh') await page.locator('.lang-switch button[data-lang="zh"]').click();
    for (const name of ['mask', 'fp16']) {
      const f = await fields(name);
      assert.ok(f.length >= 8, `${name}: its parameters`);
      for (const x of f) {
        assert.ok(x.flag?.startsWith('--'), `${name} ${x.param}: the flag beside the label`);
        assert.ok(x.words && !x.words.startsWith('--'), `${name} ${x.param}: a label in words ("${x.words}")`);
        assert.ok(x.help.length > 3 && x.help !== x.words, `${name} ${x.param}: a help line ("${x.help}")`);
        assert.ok(x.helpShown, `${name} ${x.param}: the help is shown, not only on hover`);
        if (lang === 'zh') assert.match(x.words + x.help, HAN, `${name} ${x.param}: Chinese label or help`);
      }
      const folded = f.filter((x) => x.folded).map((x) => x.param);
      assert.ok(['seed', 'batch', 'lr', 'warmup'].every((p) => folded.includes(p)), `${name}: training sizes under More settings (${folded})`);
      assert.ok(f.some((x) => !x.folded && x.param === 'steps'), `${name}: steps stays in view`);
      const more = page.locator(`section.experiment[data-experiment="${name}"] details.exp-more`);
      assert.equal(await more.evaluate((d) => d.open), false, 'More settings starts folded');
      assert.equal(await more.locator('summary').textContent(), lang === 'en' ? 'More settings' : '更多设置');
    }
  }
  if (BROWSER === 'chromium') assert.deepEqual(b.problems, []);
  await page.locator('.lang-switch button[data-lang="en"]').click();
});

test('after clicking the Walkthrough tab, → moves to the next step', async () => {
  await page.locator('nav.tabs button[data-view="walk"]').click();
  await waitForWalkthrough(page);
  assert.equal(await page.evaluate(() => window.__attnlab.walk().step), 0);
  await page.locator('nav.tabs button[data-view="walk"]').click();
  await page.keyboard.press('ArrowRight');
  await page.waitForFunction(() => window.__attnlab.walk().step === 1, null, { timeout: 5000 });
  assert.equal(await page.locator('nav.tabs button[data-view="walk"]').getAttribute('aria-selected'), 'true', 'still on the Walkthrough');
  // Reached with the keyboard, the tab list keeps its arrow keys: → goes to the next tab.
  await page.keyboard.press('Tab');
  await page.keyboard.press('Shift+Tab');
  await page.keyboard.press('ArrowRight');
  assert.equal(await page.locator('nav.tabs button[data-view="lab"]').getAttribute('aria-selected'), 'true');
});

test('Train pressed while the engine loads waits for it, then trains', { skip: BROWSER === 'firefox' ? 'the Firefox driver does not route requests' : false }, async () => {
  const c = await launch();
  try {
    const p = c.context.pages()[0] ?? (await c.context.newPage());
    // The engine's loader arrives 3 s late: the page is up, the engine is not.
    await p.route('**/engine/loader.mjs', async (route) => {
      await new Promise((r) => setTimeout(r, 3000));
      await route.continue();
    });
    await p.goto(c.url + labUrl({ task: 'reverse', length: 4, vocab: 6, layers: 1, dModel: 16, heads: 2, kvHeads: 2, steps: 20, seed: 1 }));
    assert.equal(await p.evaluate(() => window.__attnlab.info), null, 'the engine is still loading');
    await p.locator('.lab button[data-act="train"]').click();
    // The banner says so on its next frame, while the loader is still 3 s away.
    await p.waitForFunction(() => /still loading/.test(document.querySelector('.lab-banner .text').textContent), null, { timeout: 2500, polling: 50 });
    assert.equal(await p.evaluate(() => window.__attnlab.info), null, 'said before the engine loaded');
    await waitForLabSteps(p, 1, 60000);
    assert.doesNotMatch(await p.locator('.lab-banner .text').textContent(), /refused/);
  } finally {
    await c.close();
  }
});

test('"Train again with ..." starts from the baseline run; the comparison names settings as the form does', async () => {
  await page.goto(b.url + labUrl({ task: 'reverse', length: 4, vocab: 6, layers: 1, dModel: 16, heads: 2, kvHeads: 2, positional: 'rope', norm: 'pre', scale: 1, lr: 0.003, batch: 16, steps: 20, seed: 1 }));
  await page.evaluate(() => window.__attnlab.ready);
  await waitForLabPhase(page, 'idle');
  // Each run trains to its end (on a loaded machine the page may ask first whether to train a long run).
  const trainedRuns = async (n) => {
    await page.waitForFunction((k) => window.__attnlab.lab().phase === 'training' || window.__attnlab.lab().runs.length >= k, n, { timeout: 60000, polling: 50 });
    await waitForLabDone(page, 120000);
    await page.waitForFunction((k) => window.__attnlab.lab().runs.length === k, n, { timeout: 10000, polling: 100 });
  };
  await page.locator('.lab button[data-act="train"]').click();
  await trainedRuns(1);
  assert.match(await page.locator('section.compare button[data-act="variant-scale"]').textContent(), /run 1/);
  await page.locator('section.compare button[data-act="variant-scale"]').click();
  await trainedRuns(2);
  await page.locator('section.compare button[data-act="variant-norm"]').click();
  await trainedRuns(3);
  const runs = await page.evaluate(() => window.__attnlab.lab().runs.map((r) => r.settings));
  const differs = (a, x) => Object.keys(a).filter((k) => a[k] !== x[k]);
  assert.deepEqual(differs(runs[0], runs[1]), ['scale']);
  assert.deepEqual(differs(runs[0], runs[2]), ['norm'], 'the third run differs from the baseline in its one setting');
  // The table's rows are the form's labels ("learning rate"), not the settings' keys ("lr").
  await page.locator('section.compare input[data-compare="3"]').check();
  const rows = await page.$$eval('section.compare table.run-settings tbody tr', (trs) => Object.fromEntries(trs.map((tr) => [tr.dataset.setting, tr.querySelector('th').textContent])));
  assert.equal(rows.lr, 'learning rate');
  assert.equal(rows.scale, 'scale scores by 1/√d_k');
  assert.notEqual(rows.dModel, undefined);
});
