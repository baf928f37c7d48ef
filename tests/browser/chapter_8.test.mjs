// §8: the article's three tests and the reference comparison run live on the engine's layer, and
// catch the layer the reader breaks. The verdicts and their numbers are recomputed here from a
// separate engine instance in the page's main thread; the code shown is compared with the files.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { launch, readMatrix, repoRoot, screenshot } from './support.mjs';

let b;
let page;
before(async () => {
  b = await launch({ isolation: true });
  page = await b.newPage('?view=chapters&chapter=8&lang=en');
  await page.evaluate(() => window.__attnlab.ready);
});
after(async () => {
  await b?.close();
});

async function open(params = '', lang = 'en') {
  await page.goto(`${b.url}?view=chapters&chapter=8&lang=${lang}${params}`);
  await page.waitForFunction(() => window.__attnlab?.chapters?.().figures.check === 'ready', null, { timeout: 90000, polling: 50 });
  await page.evaluate(async () => {
    if (window.__refLab) return;
    const { loadAttnLab } = await import(new URL('engine/loader.mjs', document.baseURI).href);
    window.__refLab = await loadAttnLab({ flavour: 'single' });
  });
}

/** The four tests' outcomes: { shape, mask, gradient, reference } -> 'true' | 'false' | 'skipped'. */
const verdicts = () => page.$$eval('table[data-stats="check-tests"] tr[data-test]', (rows) => Object.fromEntries(rows.map((r) => [r.dataset.test, r.dataset.pass])));
const diffs = (stats) => page.$$eval(`table[data-stats="${stats}"] tr[data-stage]`, (rows) => Object.fromEntries(rows.map((r) => [r.dataset.stage, { diff: Number(r.querySelector('td[data-max-diff]').dataset.maxDiff), pass: r.dataset.pass }])));

/** Runs `fn(lab, helpers, arg)` against the reference engine; helpers make the figure's seeded inputs. */
const reference = (fn, arg) =>
  page.evaluate(
    async ([src, arg]) => {
      const mulberry32 = (seed) => {
        let a = seed >>> 0;
        return () => {
          a = (a + 0x6d2b79f5) >>> 0;
          let t = a;
          t = Math.imul(t ^ (t >>> 15), t | 1);
          t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
          return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
        };
      };
      const normals = (rand, n) => {
        const out = new Float32Array(n);
        for (let i = 0; i < n; i += 2) {
          const u = Math.max(rand(), 1e-12), v = rand(), r = Math.sqrt(-2 * Math.log(u));
          out[i] = r * Math.cos(2 * Math.PI * v);
          if (i + 1 < n) out[i + 1] = r * Math.sin(2 * Math.PI * v);
        }
        return out;
      };
      const randomX = (T, C, seed) => ({ shape: [T, C], data: normals(mulberry32(seed), T * C) });
      const f = new Function('lab', 'h', 'arg', `return (${src})(lab, h, arg);`);
      return JSON.parse(JSON.stringify(f(window.__refLab, { randomX }, arg), (k, v) => (ArrayBuffer.isView(v) ? Array.from(v) : v)));
    },
    [fn.toString(), arg],
  );

/** The engine's layer of the figure (seed 12, x seed 13, g seed 14): weights of every head, gradient norms. */
const engineLayer = (lab, h, { T, C, H, causal, flipped }) => {
  const mha = new lab.MultiHeadAttention({ dModel: C, numHeads: H, seed: 12 });
  const x = h.randomX(T, C, 13), g = h.randomX(T, C, 14);
  let options = { causal };
  if (flipped) {
    const data = new Uint8Array(T * T);
    for (let i = 0; i < T; i++) for (let j = 0; j < i; j++) data[i * T + j] = 1;
    options = { attnMask: { shape: [T, T], data } };
  }
  const tr = mha.trace(x, { ...options, stages: ['q', 'weights'] });
  const weights = Array.from({ length: H }, (_, k) => Array.from(tr.stage('weights', k).data));
  const q = Array.from({ length: H }, (_, k) => Array.from(tr.stage('q', k).data));
  const back = mha.backward(x, g, options);
  const norms = {};
  for (const n of ['q_proj', 'k_proj', 'v_proj', 'out_proj']) norms[n] = Math.hypot(...back.grads[`${n}.weight`].data);
  tr.delete();
  mha.delete();
  return { weights, q, norms };
};

test('§8 defaults: the engine layer passes all four checks, with the engine\'s numbers', async () => {
  await open();
  assert.deepEqual(await verdicts(), { shape: 'true', mask: 'true', gradient: 'true', reference: 'true' });
  const stages = await diffs('check');
  assert.deepEqual(Object.keys(stages), ['q', 'weights', 'concat', 'output']);
  for (const [n, s] of Object.entries(stages)) assert.ok(s.diff < 1e-5 && s.pass === 'true', `${n}: ${s.diff}`);
  const grads = await diffs('check-grads');
  assert.deepEqual(Object.keys(grads), ['x', 'q_proj.weight', 'q_proj.bias', 'k_proj.weight', 'k_proj.bias', 'v_proj.weight', 'v_proj.bias', 'out_proj.weight', 'out_proj.bias']);
  for (const [n, s] of Object.entries(grads)) assert.ok(s.pass === 'true', `${n}: ${s.diff}`);
  // The gradient norms shown are the engine's backward; the weights drawn are the engine's.
  const ref = await reference((lab, h, a) => new Function(`return ${a}`)()(lab, h, { T: 6, C: 8, H: 2, causal: true }), engineLayer.toString());
  const why = await page.locator('tr[data-test="gradient"] td.why').textContent();
  const names = { q_proj: 'W_Q', k_proj: 'W_K', v_proj: 'W_V', out_proj: 'W_O' };
  for (const [n, v] of Object.entries(ref.norms)) assert.ok(why.includes(`‖∂L/∂${names[n]}‖ = ${v.toFixed(3)}`), `${n}: ${why} lacks ${v.toFixed(3)}`);
  const drawn = await readMatrix(page, 'check-engine');
  for (const c of drawn) assert.equal(Math.fround(c.value), Math.fround(ref.weights[0][c.i * 6 + c.j]), `w[${c.i}][${c.j}]`);
  assert.match(await page.locator('tr[data-test="mask"] td.why').textContent(), /largest weight on a later key is 0\.000/);
});

test('§8 the wrong reshape runs, keeps its shape, its mask and its gradients, and only the reference catches it', async () => {
  await open('&f.check.breakage=reshape&f.check.H=2');
  assert.deepEqual(await verdicts(), { shape: 'true', mask: 'true', gradient: 'true', reference: 'false' });
  const stages = await diffs('check');
  assert.equal(stages.q.pass, 'false', 'q after the wrong split differs from the reference');
  assert.ok(stages.output.diff > 1e-2, `output differs by ${stages.output.diff}`);
  // Head 0 after the wrong split: the first T·D numbers of the (T, C) projections, against the right split.
  const ref = await reference((lab, h, a) => {
    const r = new Function(`return ${a}`)()(lab, h, { T: 6, C: 8, H: 2, causal: true });
    const D = 4, T = 6, C = 8;
    const rows = new Float32Array(T * C);
    for (let k = 0; k < 2; k++) for (let t = 0; t < T; t++) for (let d = 0; d < D; d++) rows[t * C + k * D + d] = r.q[k][t * D + d];
    let m = 0;
    for (let i = 0; i < T * D; i++) m = Math.max(m, Math.abs(rows[i] - r.q[0][i]));
    return m;
  }, engineLayer.toString());
  assert.equal(stages.q.diff, ref);
  assert.match(await page.locator('tr[data-test="reference"] td.why').textContent(), /first mismatch: q differs by/);
});

test('§8 a flipped mask fails the mask test with the engine\'s weight on a later key', async () => {
  await open('&f.check.breakage=mask');
  assert.deepEqual(await verdicts(), { shape: 'true', mask: 'false', gradient: 'true', reference: 'false' });
  const ref = await reference((lab, h, a) => new Function(`return ${a}`)()(lab, h, { T: 6, C: 8, H: 2, causal: false, flipped: true }), engineLayer.toString());
  let future = 0;
  for (const w of ref.weights) for (let i = 0; i < 6; i++) for (let j = i + 1; j < 6; j++) future = Math.max(future, w[i * 6 + j]);
  assert.ok(future > 0.1);
  assert.match(await page.locator('tr[data-test="mask"] td.why').textContent(), new RegExp(`later key is ${future.toFixed(3)}`));
  const stages = await diffs('check');
  assert.equal(stages.q.pass, 'true', 'the projections are right');
  assert.equal(stages.weights.pass, 'false', 'the weights are not');
});

test('§8 other settings: no causal mask skips the mask test; one head makes the reshape harmless', async () => {
  await open('&f.check.T=8&f.check.C=32&f.check.H=4&f.check.causal=off');
  assert.deepEqual(await verdicts(), { shape: 'true', mask: 'skipped', gradient: 'true', reference: 'true' });
  assert.match(await page.locator('tr[data-test="shape"] td.why').textContent(), /input 8 × 32, output 8 × 32/);
  await open('&f.check.H=1&f.check.breakage=reshape');
  assert.deepEqual(await verdicts(), { shape: 'true', mask: 'true', gradient: 'true', reference: 'true' });
  assert.ok(await page.locator('[data-figure="check"] .fig-note', { hasText: 'With one head' }).count());
  await open('&f.check.causal=off&f.check.breakage=mask');
  assert.equal(await page.locator('[data-figure="check"] .fig-note[data-nothing-to-flip]').count(), 1);
  // Changing a control recomputes: the select is the figure's, its value the URL's.
  await page.selectOption('[data-figure="check"] select[data-control="causal"]', 'on');
  await page.waitForFunction(() => window.__attnlab.chapters().figures.check === 'ready' && document.querySelector('tr[data-test="mask"]')?.dataset.pass === 'false', null, { timeout: 60000 });
  assert.match(page.url(), /f\.check\.causal=on/);
});

test('§8 the code shown is the engine\'s source and the reference the page runs, line for line', async () => {
  await open();
  const shown = await page.$$eval('[data-figure="check"] details[data-excerpt]', (ds) => ds.map((d) => ({ id: d.dataset.excerpt, file: d.dataset.file, first: Number(d.dataset.first), last: Number(d.dataset.last), text: d.querySelector('pre').textContent, lang: d.closest('[data-code]').dataset.code })));
  const list = JSON.parse(readFileSync(join(repoRoot, 'web/src/chapters/figures/check.excerpts.json'), 'utf8'));
  assert.deepEqual(shown.map((s) => s.id), [...list.filter((e) => e.lang === 'cpp'), ...list.filter((e) => e.lang === 'js')].map((e) => e.id));
  for (const s of shown) {
    const lines = readFileSync(join(repoRoot, s.file), 'utf8').split('\n');
    assert.equal(s.text, lines.slice(s.first - 1, s.last).join('\n'), `${s.id}: ${s.file}:${s.first}-${s.last}`);
    const e = list.find((x) => x.id === s.id);
    assert.ok(s.text.includes(e.signature), `${s.id} holds its signature`);
    assert.match(lines[s.last - 1], /^}/, `${s.id} ends with its closing brace`);
  }
  assert.ok(shown.some((s) => s.lang === 'cpp' && s.file === 'src/attention/heads.cpp'));
  assert.ok(shown.some((s) => s.lang === 'js' && s.file === 'web/src/chapters/figures/reference_layer.mjs'));
});

test('§8 in Chinese, and its screenshots at 1366 and 390 px', async () => {
  for (const lang of ['en', 'zh']) {
    for (const width of [1366, 390]) {
      await page.setViewportSize({ width, height: 900 });
      await open('&f.check.breakage=reshape', lang);
      if (lang === 'zh') {
        assert.match(await page.locator('table[data-stats="check-tests"] caption').textContent(), /文章的测试/);
        assert.match(await page.locator('tr[data-test="reference"]').textContent(), /未通过/);
        assert.match(await page.locator('select[data-control="breakage"] option[selected]').textContent(), /reshape/);
      }
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 0, `${lang} ${width}: the page scrolls sideways by ${overflow} px`);
      await screenshot(page, `chapter8-${lang}-${width}`);
    }
  }
  await page.setViewportSize({ width: 1360, height: 900 });
});

test('§8 no console errors', () => {
  // A request the tests' own navigation cut short (the next page.goto while a worker still loads) is not the page's.
  assert.deepEqual(b.problems.filter((p) => !/^request failed: .*\((net::ERR_ABORTED|NS_BINDING_ABORTED)\)$/.test(p)), []);
});
