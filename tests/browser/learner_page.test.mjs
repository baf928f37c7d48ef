// Smaller things a learner meets on the page: the Chinese chapters say 我爱你/你爱我 and have no
// English or code words left in chapter 7's figures, and a run's note of a non-finite loss; on a 390 px phone result charts fit, a wide
// table says it scrolls, and the lab's attention maps label only the positions they have room for;
// chapter 2 names its menu as a menu; RoPE's row labels and the lab's 20,000-step axis fit their
// drawings; the Try box is not shown for image and series tasks; the walkthrough's examples name
// each sentence once and say they run on random weights; chapter 2's and 4's figures leave no
// empty bands beside their parts.
//   node --test tests/browser/learner_page.test.mjs
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { labUrl, launch, screenshot, waitForLabSteps, waitForWalkthrough } from './support.mjs';

let b;
let page;
before(async () => {
  b = await launch({ isolation: true });
  page = await b.newPage('?lang=en');
});
after(async () => {
  await b?.close();
});

async function chapter(n, lang, width = 1360) {
  await page.setViewportSize({ width, height: 900 });
  await page.goto(`${b.url}?chapter=${n}&lang=${lang}`);
  await page.waitForFunction(() => {
    const s = window.__attnlab?.chapters?.();
    return s && Object.values(s.figures).every((f) => f === 'ready' || f === 'deferred') && [...document.querySelectorAll('section.experiment')].every((e) => e.dataset.available !== '');
  }, null, { timeout: 120000, polling: 100 });
}

/** Texts of an SVG's <text> elements drawn outside the SVG's box. */
const outside = (selector) =>
  page.$$eval(selector, (svgs) =>
    svgs.flatMap((svg) => {
      const box = svg.getBoundingClientRect();
      return Array.from(svg.querySelectorAll('text'))
        .filter((t) => t.textContent.trim())
        .filter((t) => {
          const r = t.getBoundingClientRect();
          return r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5;
        })
        .map((t) => t.textContent);
    }),
  );

test('the Chinese chapters: 我爱你 in chapter 4\'s figure, chapter 7 without English or code words', async () => {
  await chapter(4, 'zh');
  const rows = await page.$$eval('figure[data-matrix="perm-y"] text.rlabel', (ts) => ts.map((t) => t.textContent));
  assert.deepEqual(rows, ['你', '爱', '我']);
  assert.match(await page.locator('#fig-permutation .fig-note').first().textContent(), /我爱你.*你爱我/);
  await chapter(7, 'zh');
  const text = await page.locator('article.chapter .figures').textContent();
  for (const word of ['caption_match', 'evaluate', 'model.attentionMaps', 'model.forecast', 'series 任务']) assert.ok(!text.includes(word), `chapter 7 says "${word}"`);
  const title = await page.locator('figure[data-chart="crossmodal"] figcaption').textContent();
  assert.doesNotMatch(title, /\b(small|large|square|circle|triangle|top|bottom|left|right)\b/, `caption words in Chinese: ${title}`);
  const words = await page.$$eval('.cross-words button[data-word]', (bs) => bs.map((x) => x.textContent));
  assert.ok(words.length >= 3 && words.every((w) => /[\u4e00-\u9fff]/.test(w)), `word buttons: ${words}`);
});

test('on the Chinese page a run\'s note of a non-finite loss is Chinese (by its template), the numbers as the engine wrote them', async () => {
  // A bad init of twice the scale: the fp16 arm's loss is not finite at once.
  await page.goto(`${b.url}?lang=zh&x.fp16.score-scale=2#exp-fp16`);
  await page.waitForFunction(() => document.querySelector('#exp-fp16')?.dataset.available === '1', null, { timeout: 90000, polling: 100 });
  await page.locator('#exp-fp16 button[data-act="run"]').first().click();
  await page.waitForFunction(() => ['done', 'error'].includes(document.querySelector('#exp-fp16').dataset.phase), null, { timeout: 120000, polling: 100 });
  const r = await page.evaluate(() => window.__attnlab.chapters().results.fp16);
  const english = r.notes.find((n) => n.includes('Trainer: the loss is'));
  assert.ok(english, `a note of the non-finite loss: ${r.notes}`);
  const shown = await page.locator('#exp-fp16 .exp-notes').textContent();
  assert.doesNotMatch(shown, /Trainer: the loss is|training stopped|try a lower/, `no English sentence left: ${shown}`);
  assert.match(shown, /训练器：第 \d+ 步的损失为 -?nan/);
  await page.locator('.lang-switch button[data-lang="en"]').click();
  assert.ok((await page.locator('#exp-fp16 .exp-notes').textContent()).includes(english), 'English: the engine\'s own note');
});

test('chapter 2 names its d_k menu as a menu; its figure\'s parts sit together', async () => {
  await chapter(2, 'en');
  const body = await page.locator('article.chapter').textContent();
  assert.ok(!/slider/i.test(body), 'no slider in chapter 2');
  const g = await page.evaluate(() => {
    const box = (s) => {
      const r = document.querySelector(s).getBoundingClientRect();
      return { top: r.top, bottom: r.bottom };
    };
    return { hist: box('#fig-dk figure.hist'), table: box('#fig-dk table.fig-stats'), a: box('#fig-dk figure[data-matrix="dk-weights-scaled"]'), b: box('#fig-dk figure[data-matrix="dk-weights-unscaled"]') };
  });
  assert.ok(g.table.top - g.hist.bottom < 60, `the numbers right under the histogram (${Math.round(g.table.top - g.hist.bottom)} px apart)`);
  assert.ok(Math.abs(g.a.top - g.b.top) < 2, 'the two weight matrices side by side');
  await page.locator('.lang-switch button[data-lang="zh"]').click();
  assert.ok(!/滑块/.test(await page.locator('article.chapter').textContent()), 'no 滑块 in chapter 2');
});

test('chapter 4: each note has its row, and RoPE\'s row labels fit the drawing', async () => {
  await chapter(4, 'en');
  const notes = await page.$$eval('article.chapter .fig-body > .fig-note', (ns) => ns.map((n) => [n.getBoundingClientRect().width, n.parentElement.getBoundingClientRect().width]));
  assert.ok(notes.length >= 3);
  for (const [w, full] of notes) assert.ok(Math.abs(w - full) < 1, `a note spans its figure (${w} of ${full} px)`);
  assert.deepEqual(await outside('figure[data-matrix="rope-scores"] svg'), [], 'RoPE labels inside the drawing');
  const labels = await page.$$eval('figure[data-matrix="rope-scores"] text.rlabel', (ts) => ts.map((t) => [t.getBoundingClientRect().left, t.closest('svg').getBoundingClientRect().left]));
  assert.ok(labels.every(([l, s]) => l >= s - 0.5), 'no row label starts left of the drawing');
});

test('a 390 px phone: result charts fit, a wide table is stacked to fit the width, figure captions are whole', async () => {
  await chapter(3, 'en', 390);
  await page.locator('section.experiment[data-experiment="cost"] button[data-act="run"]').click();
  await page.waitForFunction(() => document.querySelector('section.experiment[data-experiment="cost"]').dataset.phase === 'done', null, { timeout: 120000, polling: 100 });
  const fit = await page.$$eval('section.experiment[data-experiment="cost"] .exp-series figure[data-chart] svg', (svgs) => svgs.map((s) => [s.getBoundingClientRect().right, s.closest('section.experiment').getBoundingClientRect().right]));
  assert.ok(fit.length > 0 && fit.every(([r, box]) => r <= box), `charts inside the panel: ${JSON.stringify(fit)}`);
  const tables = () => page.$$eval('section.experiment[data-experiment="cost"] .exp-table', (ts) => ts.map((t) => {
    const table = t.querySelector('table');
    const columns = Array.from(table.querySelectorAll('thead th'), (th) => th.textContent);
    const first = Array.from(table.querySelectorAll('tbody tr:first-child td'));
    return {
      name: table.dataset.table,
      stacked: t.hasAttribute('data-stacked'),
      over: t.scrollWidth > t.clientWidth + 1 || t.getBoundingClientRect().right > t.closest('section.experiment').getBoundingClientRect().right + 1,
      columns,
      // What a stacked cell shows beside its value: its column's name (the ::before of chapters.css).
      // (firefox-esr reports the rule, attr(data-col), rather than the string it draws.)
      labels: first.map((td) => {
        const content = getComputedStyle(td, '::before').content;
        return content === 'attr(data-col)' ? td.dataset.col : content.replace(/^"|"$/g, '');
      }),
      values: first.map((td) => td.textContent),
    };
  }));
  const phone = await tables();
  assert.ok(phone.some((t) => t.stacked), `the cost table is wider than a phone, so it is stacked (${phone.map((t) => t.name)})`);
  for (const t of phone) {
    assert.equal(t.over, false, `${t.name}: fits the phone's width`);
    if (t.stacked) assert.deepEqual(t.labels, t.columns, `${t.name}: each cell beside its column's name`);
  }
  await page.locator('section.experiment[data-experiment="cost"] .exp-table[data-stacked]').first().scrollIntoViewIfNeeded();
  await screenshot(page, 'chapter3-cost-table-390');
  // On a wide screen a table is a table again: it fits, or scrolls sideways and says so.
  await page.setViewportSize({ width: 1360, height: 900 });
  await page.waitForFunction(() => !document.querySelector('section.experiment[data-experiment="cost"] .exp-table[data-stacked]'));
  const wide = await page.$$eval('section.experiment[data-experiment="cost"] .exp-table', (ts) => ts.map((t) => ({ over: t.scrollWidth > t.clientWidth + 1, cue: t.hasAttribute('data-overflow') ? t.dataset.cue : null, shown: getComputedStyle(t, '::before').content !== 'none' })));
  for (const t of wide) if (t.over) assert.ok(/Scroll sideways/.test(t.cue ?? '') && t.shown, 'a table wider than the column says it scrolls');
  await chapter(4, 'en', 390);
  const cut = await page.$$eval('article.chapter figcaption', (cs) => cs.filter((c) => c.scrollWidth > c.clientWidth + 1 || c.getBoundingClientRect().right > c.closest('.fig-block').getBoundingClientRect().right + 1).map((c) => c.textContent));
  assert.deepEqual(cut, [], 'no figure caption cut');
  await page.setViewportSize({ width: 1360, height: 900 });
});

test('the lab: attention-map labels have room on a phone, the 20,000-step axis fits, no Try box for images or series', async () => {
  await page.setViewportSize({ width: 390, height: 900 });
  await page.goto(b.url + labUrl({ task: 'reverse', length: 8, vocab: 8, layers: 1, dModel: 16, heads: 4, kvHeads: 4, steps: 20000, seed: 1 }));
  await page.evaluate(() => window.__attnlab.ready);
  await page.locator('.lab button[data-act="train"]').click();
  await waitForLabSteps(page, 1, 60000);
  await page.waitForFunction(() => document.querySelector('figure.heatmap[data-label-every]'), null, { timeout: 60000 });
  const every = await page.$$eval('figure.heatmap[data-label-every]', (fs) => fs.map((f) => f.dataset.labelEvery.split(',').map(Number)));
  assert.ok(every.some(([r]) => r > 1), `a phone's small cells label every k-th row (${JSON.stringify(every)})`);
  await page.waitForFunction(() => document.querySelector('figure[data-curve="loss"] g.xaxis .tick'));
  await page.setViewportSize({ width: 1360, height: 900 });
  await page.waitForFunction(() => document.querySelector('figure[data-curve="loss"] svg')?.getBoundingClientRect().width > 300);
  assert.deepEqual(await outside('figure[data-curve] svg'), [], 'tick labels up to 20,000 inside the charts');
  await page.locator('.lab button[data-act="reset"]').click();
  for (const [task, shown] of [['shapes', false], ['series', false], ['reverse', true]]) {
    await page.goto(b.url + labUrl({ task }));
    await page.evaluate(() => window.__attnlab.ready);
    assert.equal(await page.locator('section.lab-try').isVisible(), shown, `${task}: Try box ${shown ? 'shown' : 'hidden'}`);
  }
});

test('the walkthrough\'s examples name each sentence once and say they run on random weights', async () => {
  for (const lang of ['en', 'zh']) {
    await page.goto(`${b.url}?view=walk&lang=${lang}`);
    await waitForWalkthrough(page);
    const labels = await page.$$eval('form.settings select[name="example"] option', (os) => os.map((o) => o.textContent));
    const love = labels.filter((l) => /I love you|我爱你/.test(l));
    assert.equal(love.length, 2, `"I love you" once in each script: ${love}`);
    const random = lang === 'en' ? 'random weights' : '随机权重';
    const bank = labels.filter((l) => l.startsWith('bank'));
    assert.equal(bank.length, 2);
    for (const l of bank) assert.ok(l.includes(random), `"${l}" says ${random}`);
    assert.equal(await page.locator('form.settings .example-random').isVisible(), true);
    assert.ok((await page.locator('form.settings .example-random').textContent()).includes(random));
  }
});
