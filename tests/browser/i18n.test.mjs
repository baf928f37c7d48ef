// The page in two languages: ?lang=zh opens it in 简体中文 with <html lang="zh-CN">; the header's
// switch changes the language in place (the URL follows; the walkthrough's step and head, the lab's
// settings and a running training stay); without lang= a Chinese browser gets Chinese; and no
// English word is left on the main controls of the Chinese page.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { launch, screenshot, settle, waitForLabPhase, waitForLabSteps, waitForWalkthrough } from './support.mjs';

let b;
let page;
before(async () => {
  b = await launch({ isolation: true });
  page = await b.newPage('?view=walk&lang=zh');
  await waitForWalkthrough(page);
});
after(async () => {
  await b?.close();
});

const htmlLang = () => page.evaluate(() => document.documentElement.lang);
const query = () => page.evaluate(() => Object.fromEntries(new URL(location.href).searchParams));
const switchTo = async (lang) => {
  await page.locator(`.lang-switch button[data-lang="${lang}"]`).click();
  await settle(page);
};
const showTab = async (view) => {
  await page.locator(`nav.tabs button[data-view="${view}"]`).click();
  await settle(page);
};

test('?lang=zh opens the page in Chinese, headings and controls included', async () => {
  assert.equal(await htmlLang(), 'zh-CN');
  assert.equal(await page.locator('nav.tabs button[data-view="walk"]').textContent(), '逐步演示');
  assert.equal(await page.locator('nav.tabs button[data-view="lab"]').textContent(), '训练实验室');
  assert.equal(await page.locator('.step-title').textContent(), '1. 词元');
  assert.equal(await page.locator('button.play').textContent(), '▶ 播放');
  assert.match(await page.locator('.explain').textContent(), /词元/);
  assert.equal(await page.locator('.lang-switch button[data-lang="zh"]').getAttribute('aria-pressed'), 'true');
  assert.match(await page.title(), /注意力/);
  assert.deepEqual(
    await page.locator('nav.steps button .t').allTextContents(),
    ['词元', '嵌入（+ 位置编码）', '查询、键、值', '注意力分数：q · k', '乘以 1/√d_k 缩放', '掩码', 'Softmax：分数 → 权重', '权重 · V', '所有头', '拼接各头', '输出投影 W_O',
      '反向传播：输出上的损失', '反向传播：经 W_O 回到各个头', '反向传播：经过加权求和', '反向传播：经过 softmax', '反向传播：传到 Q、K 和 V', '反向传播：权重的梯度', '用 KV 缓存生成'],
  );
  assert.match(await page.locator('[data-engine-badge]').textContent(), /^引擎：2 个线程/);
  await showTab('lab');
  assert.equal(await page.locator('.lab-buttons button[data-act="train"]').textContent(), '训练');
  assert.equal(await page.locator('[data-label="length"]').textContent(), '长度');
  assert.match(await page.locator('.lab-banner .text').textContent(), /选择一个任务并点击训练/);
  await showTab('walk');
});

test('switching to English and back keeps the step, the head, a lab setting and a running training', async () => {
  // Step 3 (projections, per head) on head 1.
  await page.locator('nav.steps button[data-step="2"]').click();
  await page.locator('.head-picker button[data-head="1"]').click();
  await settle(page);
  await switchTo('en');
  assert.equal(await htmlLang(), 'en');
  let q = await query();
  assert.equal(q.lang, 'en');
  assert.equal(q['w.step'], '3');
  assert.equal(q['w.head'], '1');
  assert.equal(await page.locator('.step-title').textContent(), '3. Queries, keys, values');
  assert.equal(await page.locator('nav.tabs button[data-view="walk"]').textContent(), 'Walkthrough');
  assert.equal(await page.locator('.head-picker button.on').textContent(), '1');
  assert.match(await page.locator('.explain').textContent(), /You see head 1\./);

  // A lab setting, and a training that runs through both switches.
  await showTab('lab');
  await page.locator('.lab-settings [name="lr"]').fill('0.002');
  await page.locator('.lab-settings [name="steps"]').fill('2000');
  await settle(page);
  await page.locator('.lab-buttons button[data-act="train"]').click();
  await waitForLabSteps(page, 3);
  const engineBefore = await page.evaluate(() => window.__attnlab.info);
  const stepsBefore = await page.evaluate(() => window.__attnlab.lab().metrics.at(-1).step);
  await switchTo('zh');
  assert.equal(await htmlLang(), 'zh-CN');
  q = await query();
  assert.equal(q.lang, 'zh');
  assert.equal(q.lr, '0.002');
  assert.equal(await page.locator('.lab-settings [name="lr"]').inputValue(), '0.002');
  assert.equal(await page.locator('.lab-buttons button[data-act="pause"]').textContent(), '暂停');
  assert.match(await page.locator('.lab-stats').textContent(), /^第 \d+ \/ 2000 步/);
  // The same engine keeps training: no restart, the steps go on from where they were.
  await waitForLabSteps(page, stepsBefore + 5);
  const s = await page.evaluate(() => window.__attnlab.lab());
  assert.equal(s.phase, 'training');
  assert.ok(s.metrics.at(-1).step > stepsBefore);
  assert.deepEqual(await page.evaluate(() => window.__attnlab.info), engineBefore);
  assert.match(await page.locator('figure[data-curve="loss"] figcaption .t').textContent(), /^损失$/);
  await screenshot(page, 'i18n-lab-training-zh');
  await page.locator('.lab-buttons button[data-act="reset"]').click();
  await waitForLabPhase(page, 'idle');

  await showTab('walk');
  q = await query();
  assert.equal(q['w.step'], '3');
  assert.equal(q['w.head'], '1');
  assert.equal(await page.locator('.step-title').textContent(), '3. 查询、键、值');
  assert.match(await page.locator('.explain').textContent(), /当前显示的是头 1。/);
});

/** Visible texts of the main controls and headings that contain an English word. */
async function englishLeft() {
  return page.evaluate(() => {
    // Names that stay as they are in Chinese ML writing, and the symbols of the formulas.
    const allowed = new Set(['GPT', 'RoPE', 'SIMD', 'Softmax', 'softmax', 'LSTM', 'Transformer', 'Pre-LN', 'Post-LN', 'WebAssembly', 'threads', 'single', 'nats', 'float64', 'ETA', 'attnlab', 'reshape', 'GQA', 'MQA', 'BPE', 'Query', 'Key', 'Value', 'token', 'Worker', 'Web', 'Longformer', 'COOP', 'COEP', 'SharedArrayBuffer', 'viridis', 'PuOr', 'max', 'rot', 'Tab', 'URL']);
    const scopes = ['header.top', '.player', '.step-head', '.beat-caption', '.explain', 'form.settings:not(.lab-settings)', 'nav.steps', '.lab-side', '.lab-main h3', '.lab-banner', '.try-hint', '.stage figcaption', '.stage .legend', 'footer.foot'];
    const out = [];
    for (const scope of scopes)
      for (const root of document.querySelectorAll(scope)) {
        const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
        for (let n = walker.nextNode(); n; n = walker.nextNode()) {
          const el = n.parentElement;
          // The example sentences are content, not labels; the English switch names its language.
          // A file name in <code> is typed as it is in either language.
          if (!el || el.closest('select[name="example"], .lang-switch, [hidden], code')) continue;
          if (el.closest('select') && !el.closest('option')?.selected) continue;
          // Quoted text (“…”) is the reader's sentence or its tokens, not a label.
          const text = n.textContent.replace(/“[^”]*”/g, '');
          const words = (text.match(/[A-Za-z][A-Za-z_-]*[A-Za-z]/g) ?? []).filter((w) => w.length >= 3 && !allowed.has(w) && !/_/.test(w));
          if (words.length) out.push(`${scope}: “${n.textContent.trim()}” (${words.join(', ')})`);
        }
      }
    return out;
  });
}

test('no English label is left on the Chinese page', async () => {
  await showTab('walk');
  assert.equal(await htmlLang(), 'zh-CN');
  const left = [];
  for (let step = 0; step < 11; step++) {
    await page.locator(`nav.steps button[data-step="${step}"]`).click();
    await settle(page);
    left.push(...(await englishLeft()));
  }
  await showTab('lab');
  left.push(...(await englishLeft()));
  await showTab('walk');
  assert.deepEqual([...new Set(left)], []);
});

test('without lang= a Chinese browser gets Chinese, and an English one English', async () => {
  const zhBrowser = await launch({ isolation: true, locale: 'zh-CN' });
  try {
    const p = await zhBrowser.newPage('?view=walk');
    await waitForWalkthrough(p);
    assert.equal(await p.evaluate(() => document.documentElement.lang), 'zh-CN');
    assert.equal(await p.locator('nav.tabs button[data-view="walk"]').textContent(), '逐步演示');
    assert.equal(new URL(p.url()).searchParams.get('lang'), null, 'the default is not written into the link');
  } finally {
    await zhBrowser.close();
  }
  const enBrowser = await launch({ isolation: true });
  try {
    const p = await enBrowser.newPage('?view=walk');
    await waitForWalkthrough(p);
    assert.equal(await p.evaluate(() => [document.documentElement.lang, navigator.language].join()), 'en,en-US');
    assert.equal(await p.locator('nav.tabs button[data-view="walk"]').textContent(), 'Walkthrough');
  } finally {
    await enBrowser.close();
  }
});

test('both tabs in both languages fit a phone and a wide screen without sideways scrolling', async () => {
  for (const lang of ['en', 'zh'])
    for (const width of [360, 1280, 1920])
      for (const view of ['walk', 'lab']) {
        await page.setViewportSize({ width, height: 900 });
        await page.goto(`${b.url}?lang=${lang}&w.step=5&view=${view}`);
        await page.evaluate(() => window.__attnlab.ready);
        if (view === 'walk') await waitForWalkthrough(page);
        await settle(page);
        const r = await page.evaluate(() => ({
          // Sideways scrolling: content wider than the viewport less its vertical scrollbar (Firefox
          // draws one 12 px wide; headless Chromium's overlays the page).
          scroll: document.documentElement.scrollWidth,
          client: document.documentElement.clientWidth,
          // Controls and headings whose text runs past their own box (CJK text that cannot wrap).
          clipped: [...document.querySelectorAll('header.top *, .player *, .step-head *, form.settings label, nav.steps button, .lab-buttons button, .lab-io *')]
            .filter((e) => e.checkVisibility?.() !== false && e.offsetParent && e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX === 'visible' && e.clientWidth > 0 && !(e instanceof HTMLSelectElement) && !(e instanceof HTMLInputElement))
            .filter((e) => e.getBoundingClientRect().right > document.documentElement.clientWidth)
            .map((e) => `${e.tagName.toLowerCase()}.${e.className}: ${e.textContent.trim().slice(0, 40)}`),
        }));
        assert.equal(r.scroll, r.client, `${lang} ${view} at ${width} px scrolls sideways`);
        assert.ok(width - r.client <= 16, `${lang} ${view}: the viewport is ${r.client} px of ${width}`);
        assert.deepEqual(r.clipped, [], `${lang} ${view} at ${width} px`);
        if (lang === 'zh') assert.deepEqual(await englishLeft(), [], `English left on the Chinese ${view} at ${width} px`);
        await screenshot(page, `i18n-${view}-${lang}-${width}`);
      }
});

test('no console errors or failed requests', () => {
  assert.deepEqual(b.problems, []);
});
