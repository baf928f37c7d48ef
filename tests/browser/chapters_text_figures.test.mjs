// The chapters' figures on the shipped models: §1.3 the same word in two contexts (brown, tang),
// §3.2 every head (tang, brown), §5.2 a poem's longest links (tang). The page's first load fetches
// no model; a figure fetches its model (once) when it is scrolled into view, with its progress;
// every number shown equals what a separate engine in the page computes from the same model file;
// a reader's own pair and text recompute; both languages, screenshots at 1366 and 390 px.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { launch, loadReferenceEngine, screenshot, settle } from './support.mjs';

let b;
let page;
const fetched = [];
before(async () => {
  b = await launch({ isolation: true });
  page = await b.newPage('?lang=en');
  await settled();
  // Every response the page and its workers get from the first load below on.
  page.on('response', (r) => fetched.push(r.url()));
  await page.goto(`${b.url}?lang=en`);
});
after(async () => {
  await b?.close();
});

/** The model files the page asked for (the test's own reference engine asks with ?reference). */
const modelsFetched = () => fetched.filter((u) => /\/models\//.test(u) && !u.endsWith('?reference'));
const figState = (id) => page.evaluate((id) => window.__attnlab.chapters().figures[id], id);

/** Waits for the chapter's figures (shipped-model ones deferred until seen) and its experiments' list (their worker loaded: leaving earlier cuts its start off). */
function settled() {
  return page.waitForFunction(() => {
    const s = window.__attnlab?.chapters?.();
    return s && Object.values(s.figures).every((f) => f === 'ready' || f === 'deferred') && [...document.querySelectorAll('section.experiment')].every((e) => e.dataset.available !== '');
  }, null, { timeout: 90000, polling: 50 });
}

async function openChapter(n, lang = 'en') {
  await page.goto(`${b.url}?chapter=${n}&lang=${lang}`);
  await settled();
}

/** Types `value` into a figure's field and commits it, as leaving the field does. */
async function type(selector, value) {
  await page.locator(selector).fill(value);
  await page.locator(selector).dispatchEvent('change');
}

/** Scrolls the figure into view (a deferred one is asked for by its button) and waits until it is drawn from the engine's answer. */
async function showFigure(id) {
  await page.locator(`#fig-${id}`).scrollIntoViewIfNeeded();
  // Its button, unless the scroll has started it already (then the button is gone).
  if ((await figState(id)) === 'deferred') await page.evaluate((id) => document.querySelector(`#fig-${id} button[data-act="fig-compute"]`)?.click(), id);
  await page.waitForFunction((id) => ['ready', 'error'].includes(window.__attnlab.chapters().figures[id]), id, { timeout: 90000, polling: 50 });
  assert.equal(await figState(id), 'ready', await page.locator(`#fig-${id}`).textContent());
  await settle(page);
}

/** Runs fn(lab, model, arg) in the page with a separate engine and models/<name>.safetensors fetched by the test. */
async function reference(name, fn, arg) {
  await loadReferenceEngine(page);
  return page.evaluate(
    async ([name, src, arg]) => {
      window.__refModels ??= {};
      if (!window.__refModels[name]) {
        const bytes = new Uint8Array(await (await fetch(new URL(`models/${name}.safetensors?reference`, document.baseURI))).arrayBuffer());
        window.__refModels[name] = window.__refLab.Model.load(bytes);
      }
      const model = window.__refModels[name];
      const ids = (text) => {
        const tok = model.tokenizer();
        const begin = tok.beginId();
        const out = Int32Array.from([...(begin === null ? [] : [begin]), ...tok.encode(text)]);
        tok.delete();
        return out;
      };
      const out = new Function('lab', 'model', 'ids', 'arg', `return (${src})(lab, model, ids, arg);`)(window.__refLab, model, ids, arg);
      return JSON.parse(JSON.stringify(out, (k, v) => (ArrayBuffer.isView(v) ? Array.from(v) : v)));
    },
    [name, fn.toString(), arg],
  );
}

/** The values a canvas heat-map (ui/heatmap_canvas.ts) was drawn from: { shape, data }. */
const readHeatmap = (name) => page.evaluate((name) => {
  const p = document.querySelector(`figure[data-heatmap="${name}"] canvas`).props;
  return { shape: p.data.shape, data: Array.from(p.data.data, (v) => (v === -Infinity ? null : v)) };
}, name);

const close = (a, b, tol, what) => assert.ok(Math.abs(a - b) <= tol, `${what}: page ${a}, engine ${b}`);

test('the page\'s first load fetches no model; chapter 1 draws its other figures, the shipped-model ones wait', async () => {
  await settled();
  await page.waitForFunction(() => window.__attnlab.chapters().firstDrawnMs != null, null, { timeout: 30000 });
  const s = await page.evaluate(() => window.__attnlab.chapters());
  assert.equal(s.chapter, 1);
  assert.equal(s.figures['context-brown'], 'deferred');
  assert.deepEqual(modelsFetched(), [], 'no model file requested at the first load');
  assert.match(await page.locator('#fig-context-brown').textContent(), /brown\.safetensors.*fetched when you scroll to the figure/);
  await page.waitForTimeout(1000);
  assert.equal(await figState('context-brown'), 'deferred', 'still deferred: the reader has not scrolled');
  assert.deepEqual(modelsFetched(), [], 'no model file requested before the reader scrolls');
});

/** The §1.3 numbers of a figure, recomputed: residual cosine distances and the heads' mean attention row. */
async function checkContext(id, name) {
  const shown = await page.evaluate((id) => {
    const el = document.querySelector(`#fig-${id}`);
    const v = (n) => el.querySelector(`[data-control="${n}"]`).value;
    return {
      a: v('a'), b: v('b'), word: v('word'), layer: Number(v('layer')), head: Number(v('head')),
      distance: Array.from(el.querySelectorAll('.ctx-bar'), (e) => Number(e.dataset.value)),
      rows: Array.from(el.querySelectorAll('.ctx-sentence'), (s) => Array.from(s.querySelectorAll('.ctx-tok[data-weight]'), (t) => Number(t.dataset.weight))),
      words: Array.from(el.querySelectorAll('.ctx-sentence'), (s) => s.querySelector('.ctx-tok.word').dataset.key),
    };
  }, id);
  const ref = await reference(name, (lab, model, ids, s) => {
    const out = { distance: [], rows: [], positions: [] };
    // The last token covering the word's first occurrence (after the begin token, if any).
    const tok = model.tokenizer();
    const shift = tok.beginId() === null ? 0 : 1;
    const seqs = [s.a, s.b].map(ids);
    const pos = [s.a, s.b].map((text) => {
      const at = text.indexOf(s.word);
      return shift + tok.tokens(text).findLastIndex((t) => t.start < at + s.word.length && t.end > at);
    });
    tok.delete();
    const res = seqs.map((q) => model.residuals(q));
    const [L1, , C] = res[0].shape;
    for (let l = 0; l < L1; l++) {
      const at = (k) => res[k].data.subarray((l * res[k].shape[1] + pos[k]) * C, (l * res[k].shape[1] + pos[k] + 1) * C);
      const a = at(0), b = at(1);
      let ab = 0, aa = 0, bb = 0;
      for (let c = 0; c < C; c++) { ab += a[c] * b[c]; aa += a[c] * a[c]; bb += b[c] * b[c]; }
      out.distance.push(1 - ab / Math.sqrt(aa * bb));
    }
    seqs.forEach((q, k) => {
      const m = model.attentionMaps(q);
      const [, H, T] = m.shape;
      const heads = s.head < 0 ? [...Array(H).keys()] : [s.head];
      out.rows.push(Array.from({ length: pos[k] + 1 }, (_, j) => heads.reduce((acc, h) => acc + m.data[((s.layer * H + h) * T + pos[k]) * T + j], 0) / heads.length));
    });
    out.positions = pos;
    return out;
  }, shown);
  assert.equal(shown.distance.length, ref.distance.length);
  shown.distance.forEach((v, l) => close(v, ref.distance[l], 1e-6, `${id} distance[${l}]`));
  assert.equal(shown.distance[0], 0, 'the same token has the same embedding');
  assert.deepEqual(shown.words.map(Number), ref.positions);
  shown.rows.forEach((r, k) => r.forEach((w, j) => close(w, ref.rows[k][j], 1e-6, `${id} row ${k}[${j}]`)));
  return shown;
}

test('§1.3 brown: scrolled into view, the model is fetched once with its progress; distances and attention are the engine\'s; the reader\'s own pair recomputes', async () => {
  // The reader scrolls: the figure is in view and starts, showing the fetch's progress.
  await page.evaluate(() => window.scrollBy(0, 300));
  await page.waitForFunction(() => document.querySelector('#fig-context-brown progress, #fig-context-brown .fig-body'), null, { timeout: 30000 });
  await showFigure('context-brown');
  assert.equal(modelsFetched().filter((u) => u.endsWith('/models/brown.safetensors')).length, 1, modelsFetched().join(' '));
  const first = await checkContext('context-brown', 'brown');
  assert.equal(first.word, 'bank');
  assert.ok(first.distance.at(-1) > 0.01);
  // The reader's own pair, and another head.
  await type('#fig-context-brown [data-control="a"]', 'The boat drifted toward the muddy bank of the stream.');
  await showFigure('context-brown');
  await page.locator('#fig-context-brown [data-control="head"]').selectOption('2');
  await showFigure('context-brown');
  await page.locator('#fig-context-brown [data-control="layer"]').selectOption('3');
  await showFigure('context-brown');
  const mine = await checkContext('context-brown', 'brown');
  assert.equal(mine.a, 'The boat drifted toward the muddy bank of the stream.');
  assert.equal(mine.head, 2);
  // A word the sentences do not share as one token: the error says so.
  await type('#fig-context-brown [data-control="word"]', 'stream');
  await page.waitForFunction(() => window.__attnlab.chapters().figures['context-brown'] === 'error');
  assert.match(await page.locator('#fig-context-brown .fig-error').textContent(), /sentence B has no “stream”/);
  assert.equal(modelsFetched().filter((u) => u.endsWith('/models/brown.safetensors')).length, 1, 'fetched once');
});

test('§1.3 tang: 行 in two lines of verse; its numbers are the engine\'s', async () => {
  await showFigure('context-tang');
  const shown = await checkContext('context-tang', 'tang');
  assert.equal(shown.word, '行');
});

/** The §3.2 grid and table against the reference engine's attentionMaps and headScores. */
async function checkEveryHead(name) {
  const text = await page.locator('#fig-every-head [data-control="text"]').inputValue();
  const ref = await reference(name, (lab, model, ids, text) => {
    const q = ids(text);
    return { maps: model.attentionMaps(q), scores: model.headScores(q) };
  }, text);
  const [L, H, T] = ref.maps.shape;
  for (let l = 0; l < L; l++)
    for (let h = 0; h < H; h++) {
      const shown = await readHeatmap(`every-head-${l}-${h}`);
      assert.deepEqual(shown.shape, [T, T], `${l}.${h}: every cell drawn`);
      for (let i = 0; i < T; i++) for (let j = 0; j <= i; j++) close(shown.data[i * T + j], ref.maps.data[((l * H + h) * T + i) * T + j], 1e-6, `${name} ${l}.${h}[${i}][${j}]`);
    }
  const table = await page.$$eval('#fig-every-head .every-head-scores tbody tr', (rows) => rows.map((r) => ({ head: r.dataset.head, cells: Object.fromEntries(Array.from(r.querySelectorAll('td[data-pattern]'), (c) => [c.dataset.pattern, c.dataset.value === '' ? null : Number(c.dataset.value)])) })));
  assert.equal(table.length, L * H);
  for (const s of ref.scores) {
    const r = table.find((x) => x.head === `${s.layer}.${s.head}`);
    for (const p of ['previous_token', 'duplicate_token', 'induction', 'first_token', 'self']) assert.equal(r.cells[p], s[p], `${name} ${s.layer}.${s.head} ${p}`);
    const best = Object.entries(r.cells).filter(([, v]) => v !== null).sort((x, y) => y[1] - x[1])[0];
    assert.match(await page.locator(`figure[data-heatmap="every-head-${s.layer}-${s.head}"] .matrix-title`).textContent(), new RegExp(`^${s.layer}\\.${s.head} · .* ${best[1].toFixed(2)}(?!\\d)`));
  }
  return table;
}

test('§3.2 every head of tang, then of brown: maps, scores and labels are the engine\'s', async () => {
  await openChapter(3);
  assert.equal(await figState('every-head'), 'deferred');
  await showFigure('every-head');
  const tang = await checkEveryHead('tang');
  assert.ok(tang.every((r) => 'rhyme' in r.cells && 'paired_line' in r.cells), 'the poem scores on a poem');
  await page.locator('#fig-every-head [data-control="model"]').selectOption('brown');
  await showFigure('every-head');
  assert.match(await page.locator('#fig-every-head [data-control="text"]').inputValue(), /^Mr\. Smith/);
  const brown = await checkEveryHead('brown');
  assert.ok(brown.every((r) => !('rhyme' in r.cells)));
  await type('#fig-every-head [data-control="text"]', 'The cat sat. The cat ran.');
  await showFigure('every-head');
  await checkEveryHead('brown');
  await screenshot(page, 'chapter-3-every-head-1366');
});

test('§5.2 a held-out poem\'s longest links: head, weights and links are the engine\'s', async () => {
  await openChapter(5);
  await showFigure('poem-links');
  const shown = await page.evaluate(() => {
    const el = document.querySelector('#fig-poem-links');
    const note = el.querySelector('.fig-note[data-layer]');
    return {
      layer: Number(note.dataset.layer), head: Number(note.dataset.head), note: note.textContent,
      links: Array.from(el.querySelectorAll('.poem-links li'), (li) => ({ query: Number(li.dataset.query), key: Number(li.dataset.key), weight: Number(li.dataset.weight), distance: Number(li.dataset.distance), kind: li.dataset.kind })),
      arcs: el.querySelectorAll('.link-arc').length,
    };
  });
  // The default: Bai Juyi's regulated verse of 7-character lines, held out of tang's training.
  const poem = '曾陪鹤驭两三仙，亲侍龙舆四五年。\n天上欢华春有限，世间漂泊海无边。\n荣枯事过都成梦，忧喜心忘便是禅。\n官满更归何处去，香炉峰在宅门前。\n';
  const ref = await reference('tang', (lab, model, ids, poem) => {
    const q = ids(poem);
    const m = model.attentionMaps(q);
    const [L, H, T] = m.shape;
    // The poem's lines from its characters: token k + 1 is character k; a line is its characters
    // and its closing mark (，/。, its last column).
    const lines = [];
    let cur = [];
    [...poem].forEach((ch, k) => {
      if (/\p{Script=Han}/u.test(ch)) cur.push(k + 1);
      else if (ch === '，' || ch === '。') { cur.push(k + 1); lines.push(cur); cur = []; }
    });
    // The poem patterns (include/attnlab/interp/poem_patterns.hpp) written out again from their definitions.
    const POEM = ['paired_line', 'paired_next', 'rhyme', 'rhyme_next'];
    const keys = Object.fromEntries(POEM.map((p) => [p, Array.from({ length: T }, () => [])]));
    lines.forEach((line, n) => {
      if (n % 2 === 0) return;
      line.forEach((qq, c) => {
        keys.paired_line[qq].push(lines[n - 1][c]);
        if (c + 1 < lines[n - 1].length) keys.paired_next[qq].push(lines[n - 1][c + 1]);
      });
      if (n >= 3) {
        keys.rhyme[line.at(-2)].push(lines[n - 2].at(-2));
        keys.rhyme_next[line.at(-3)].push(lines[n - 2].at(-2));
      }
    });
    const score = (l, h, p) => {
      let sum = 0, rows = 0;
      for (let i = 1; i < T; i++) if (keys[p][i].length) { sum += keys[p][i].reduce((s, j) => s + m.data[((l * H + h) * T + i) * T + j], 0); rows++; }
      return rows ? sum / rows : -1;
    };
    let best = { s: -1 };
    for (let l = 0; l < L; l++) for (let h = 0; h < H; h++) for (const p of POEM) if (score(l, h, p) > best.s + 1e-12) best = { l, h, p, s: score(l, h, p) };
    const w = (i, j) => m.data[((best.l * H + best.h) * T + i) * T + j];
    const links = [];
    const isChar = (i) => i > 0 && /\p{Script=Han}/u.test([...poem][i - 1]);
    for (let i = 0; i < T; i++) for (let j = 1; j <= i - 2; j++) if (isChar(i) && isChar(j) && w(i, j) >= 0.3) links.push({ query: i, key: j, weight: w(i, j), distance: i - j });
    links.sort((x, y) => y.distance - x.distance || y.weight - x.weight);
    return { best, links, T, weights: Array.from({ length: T * T }, (_, k) => w(Math.floor(k / T), k % T)) };
  }, poem);
  assert.deepEqual([shown.layer, shown.head], [ref.best.l, ref.best.h], 'the head chosen is the best on the poem patterns');
  // The note gives the head's score on each of the four patterns, by name, and nothing else.
  const scores = shown.note.match(/Its poem scores: (.*?)\. Each arc/)?.[1] ?? '';
  assert.doesNotMatch(scores, /undefined|NaN/, shown.note);
  assert.equal(scores.match(/\d\.\d\d/g)?.length, 4, shown.note);
  for (const label of ['paired line', 'previous rhyme', 'paired line, next position', 'previous rhyme, before the rhyme']) assert.match(scores, new RegExp(`${label} \\d\\.\\d\\d`), shown.note);
  assert.deepEqual(shown.links.map((k) => [k.query, k.key, k.distance]), ref.links.slice(0, 8).map((k) => [k.query, k.key, k.distance]));
  shown.links.forEach((k, n) => close(k.weight, ref.links[n].weight, 1e-6, `link ${n}`));
  assert.equal(shown.arcs, shown.links.length, 'each listed link drawn as an arc');
  const map = await readHeatmap('poem-links-map');
  assert.deepEqual(map.shape, [ref.T, ref.T]);
  for (let i = 0; i < ref.T; i++) for (let j = 0; j <= i; j++) close(map.data[i * ref.T + j], ref.weights[i * ref.T + j], 1e-6, `map[${i}][${j}]`);
  await screenshot(page, 'chapter-5-poem-links-1366');
});

test('in Chinese every figure reads in Chinese; screenshots at 1366 and 390 px, no sideways scroll', async () => {
  for (const [n, ids] of [[1, ['context-brown', 'context-tang']], [3, ['every-head']], [5, ['poem-links']]]) {
    for (const lang of ['zh', 'en']) {
      for (const width of [1366, 390]) {
        await page.setViewportSize({ width, height: 900 });
        await openChapter(n, lang);
        for (const id of ids) await showFigure(id);
        const text = await page.locator(`#fig-${ids[0]} .fig-body`).textContent();
        if (lang === 'zh') assert.match(text, /[\u4e00-\u9fff]{4}/, `§${n} in Chinese`);
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        assert.ok(overflow <= 0, `§${n} ${lang} ${width}: the page scrolls sideways by ${overflow} px`);
        await screenshot(page, `chapter-${n}-text-figures-${lang}-${width}`);
      }
    }
  }
  await page.setViewportSize({ width: 1360, height: 900 });
});

test('no console errors or failed requests', () => {
  assert.deepEqual(b.problems, []);
});
