// The chapters' figures show the engine's numbers: each figure's matrices and the numbers the
// worker derives from them (a max difference, an entropy, FlashAttention's tiles) are recomputed
// here with a separate engine instance in the page's main thread and compared.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { launch, readMatrix } from './support.mjs';

let b;
let page;
before(async () => {
  b = await launch({ isolation: true });
  page = await b.newPage('?view=chapters&chapter=4&lang=en');
  await page.evaluate(() => window.__attnlab.ready);
  await page.evaluate(async () => {
    const { loadAttnLab } = await import(new URL('engine/loader.mjs', document.baseURI).href);
    window.__refLab = await loadAttnLab({ flavour: 'single' });
  });
});
after(async () => {
  await b?.close();
});

async function open(chapter, extra = '') {
  await page.goto(`${b.url}?view=chapters&chapter=${chapter}&lang=en${extra}`);
  await page.waitForFunction(() => {
    const s = window.__attnlab?.chapters?.();
    return s && Object.values(s.figures).length && Object.values(s.figures).every((f) => f === 'ready' || f === 'deferred');
  }, null, { timeout: 90000, polling: 50 });
  await page.evaluate(async () => {
    if (window.__refLab) return;
    const { loadAttnLab } = await import(new URL('engine/loader.mjs', document.baseURI).href);
    window.__refLab = await loadAttnLab({ flavour: 'single' });
  });
}

/** Runs `fn(lab, helpers)` in the page against the reference engine; helpers make the figures' seeded inputs. */
const reference = (fn, arg) =>
  page.evaluate(
    async ([src, arg]) => {
      const lab = window.__refLab;
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
      const out = f(lab, { randomX }, arg);
      return JSON.parse(JSON.stringify(out, (k, v) => (ArrayBuffer.isView(v) ? Array.from(v) : v === -Infinity ? '-inf' : v)));
    },
    [fn.toString(), arg],
  );

const close = (a, b, tol, what) => assert.ok(Math.abs(a - b) <= tol, `${what}: page ${a}, engine ${b}`);

test('§4 the sinusoidal table and P·Pᵀ are the engine\'s', async () => {
  await open(4);
  const ref = await reference((lab) => {
    const mha = new lab.MultiHeadAttention({ dModel: 16, numHeads: 1, bias: false });
    const tr = mha.trace({ shape: [24, 16], data: new Float32Array(24 * 16) }, { positional: 'sinusoidal', stages: ['x'] });
    const P = tr.stage('x');
    const sim = [];
    for (let i = 0; i < 24; i++) for (let j = 0; j < 24; j++) {
      let s = 0;
      for (let c = 0; c < 16; c++) s += P.data[i * 16 + c] * P.data[j * 16 + c];
      sim.push(s);
    }
    tr.delete();
    mha.delete();
    return { P: P.data, sim };
  });
  const table = await readMatrix(page, 'pe-table');
  for (const c of table) assert.equal(Math.fround(c.value), Math.fround(ref.P[c.i * 16 + c.j]), `P[${c.i}][${c.j}]`);
  const sim = await readMatrix(page, 'pe-sim');
  for (const c of sim) close(c.value, ref.sim[c.i * 24 + c.j], 1e-4 * 24, `PPᵀ[${c.i}][${c.j}]`);
});

test('§4 permutation: the max difference shown is the engine\'s, ~0 without positions and large with them', async () => {
  for (const pos of ['none', 'rope']) {
    await open(4, `&f.permutation.pos=${pos}`);
    const shown = Number(await page.locator('[data-figure="permutation"] .fig-note[data-max-diff]').getAttribute('data-max-diff'));
    const ref = await reference((lab, h, pos) => {
      const mha = new lab.MultiHeadAttention({ dModel: 8, numHeads: 2, seed: 11 });
      const x = h.randomX(3, 8, 12);
      const perm = [2, 1, 0];
      const px = new Float32Array(24);
      perm.forEach((p, i) => px.set(x.data.subarray(p * 8, p * 8 + 8), i * 8));
      const y = mha.forward(x, { positional: pos }).data;
      const yp = mha.forward({ shape: [3, 8], data: px }, { positional: pos }).data;
      let m = 0;
      perm.forEach((p, i) => { for (let c = 0; c < 8; c++) m = Math.max(m, Math.abs(yp[i * 8 + c] - y[p * 8 + c])); });
      mha.delete();
      return m;
    }, pos);
    assert.equal(shown, ref, `${pos}: page ${shown}, engine ${ref}`);
    if (pos === 'none') assert.ok(shown < 1e-5);
    else assert.ok(shown > 1e-2);
  }
});

test('§4 RoPE: q_m·k_n depends only on m − n', async () => {
  await open(4);
  const spread = Number(await page.locator('[data-figure="rope"] .fig-note').getAttribute('data-spread'));
  assert.ok(spread < 1e-4, `spread ${spread}`);
  const cells = await readMatrix(page, 'rope-scores');
  const at = (i, j) => cells.find((c) => c.i === i && c.j === j).value;
  close(at(3, 1), at(8, 6), 1e-4, 'q3·k1 vs q8·k6');
});

test('§2 the d_k figure: entropy and softmax-gradient norm from the engine\'s weights', async () => {
  await open(2, '&f.dk.dk=256');
  const ref = await reference((lab, h) => {
    const C = 256;
    const mha = new lab.MultiHeadAttention({ dModel: C, numHeads: 1, bias: false });
    const I = new Float32Array(C * C);
    const R = new Float32Array(C * C);
    for (let i = 0; i < C; i++) { I[i * C + i] = 1; R[i * C + ((i + 1) % C)] = 1; }
    mha.setParameter('q_proj.weight', { shape: [C, C], data: I });
    mha.setParameter('k_proj.weight', { shape: [C, C], data: R });
    const out = {};
    for (const scale of [true, false]) {
      const tr = mha.trace(h.randomX(12, C, 7), { scale, stages: ['weights'] });
      const w = tr.stage('weights', 0).data;
      let e = 0, g = 0;
      for (let i = 0; i < 12; i++) {
        let hh = 0, p2 = 0, p3 = 0;
        for (let j = 0; j < 12; j++) { const p = w[i * 12 + j]; if (p > 0) hh -= p * Math.log(p); p2 += p * p; p3 += p * p * p; }
        e += hh; g += Math.sqrt(Math.max(0, p2 - 2 * p3 + p2 * p2));
      }
      out[scale ? 'scaled' : 'unscaled'] = { entropy: e / 12, gradNorm: g / 12 };
      tr.delete();
    }
    mha.delete();
    return out;
  });
  for (const k of ['scaled', 'unscaled']) {
    const entropy = Number((await page.locator(`table[data-stats="dk"] tr[data-row="${k}"] td[data-v="entropy"]`).textContent()).replace('−', '-'));
    close(entropy, ref[k].entropy, 0.0006, `${k} entropy`);
    const grad = Number(await page.locator(`table[data-stats="dk"] tr[data-row="${k}"] td[data-v="gradNorm"]`).textContent());
    close(grad, ref[k].gradNorm, 0.006 * Math.max(grad, 1e-6) + 1e-12, `${k} gradient norm`);
  }
  assert.ok(ref.unscaled.entropy < ref.scaled.entropy, 'unscaled softmax is sharper at d_k = 256');
});

test('§6 FlashAttention tiles: the tiled weights equal the engine\'s softmax', async () => {
  await open(6);
  const tiled = await readMatrix(page, 'flash-tiled');
  const full = await readMatrix(page, 'flash-full');
  for (const c of tiled) close(c.value, full.find((d) => d.i === c.i && d.j === c.j).value, 1e-6, `w[${c.i}][${c.j}]`);
  const ref = await reference((lab, h) => {
    const mha = new lab.MultiHeadAttention({ dModel: 8, numHeads: 1, seed: 6 });
    const tr = mha.trace(h.randomX(8, 8, 7), { stages: ['weights'] });
    const w = tr.stage('weights', 0).data;
    tr.delete();
    mha.delete();
    return w;
  });
  for (const c of full) assert.equal(Math.fround(c.value), Math.fround(ref[c.i * 8 + c.j]), `engine weight [${c.i}][${c.j}]`);
  assert.ok(Number(await page.locator('[data-figure="flash"] .fig-note').getAttribute('data-max-diff')) < 1e-6);
});

test('§6 masks: causal, padding and their OR; fp16 overflows only with the naive softmax', async () => {
  await open(6, '&f.fp16.size=64');
  const causal = await readMatrix(page, 'mask-causal');
  const padding = await readMatrix(page, 'mask-padding');
  const both = await readMatrix(page, 'mask-both');
  for (const c of both) {
    const masked = causal.find((d) => d.i === c.i && d.j === c.j).value === -Infinity || padding.find((d) => d.i === c.i && d.j === c.j).value === -Infinity;
    assert.equal(c.value === -Infinity, masked, `both[${c.i}][${c.j}]`);
  }
  const naive = Number(await page.locator('[data-figure="fp16"] .fig-body').getAttribute('data-naive-non-finite'));
  assert.ok(naive > 0, 'the naive fp16 softmax overflows at score size 64');
  const fixed = await readMatrix(page, 'fp16-fixed');
  assert.ok(fixed.every((c) => Number.isFinite(c.value)), 'softmax in fp32: every weight finite');
});

test('§8 the engine layer equals the plain JavaScript formulas', async () => {
  await open(8);
  const diffs = await page.$$eval('table[data-stats="check"] td[data-max-diff]', (tds) => tds.map((td) => Number(td.dataset.maxDiff)));
  assert.equal(diffs.length, 4);
  for (const d of diffs) assert.ok(d < 1e-5, `max difference ${d}`);
});

// The trained figures (web/src/chapters/figures/*.compute.ts): the reference engine trains the
// same seeded model in the same chunks of 25 steps.

test('§7 cross-modal: the drawn weights of each word are the engine\'s attentionMaps of the trained model', async () => {
  await open(7);
  const shown = await page.evaluate(() => {
    const fig = document.querySelector('figure[data-chart="crossmodal"]');
    return {
      note: document.querySelector('[data-figure="crossmodal"] .fig-note').dataset.accuracy,
      pair: Number(fig.dataset.pair),
      word: Number(fig.dataset.word),
      heads: Array.from(fig.querySelectorAll('g[data-head]'), (g) => Array.from(g.querySelectorAll('rect.patch'), (r) => Number(r.dataset.weight))),
    };
  });
  const ref = await reference((lab, h, arg) => {
    const task = new lab.Task('caption_match', { vocab: 4, seed: 1 });
    const S = task.imageSize();
    const model = new lab.Model({ kind: 'encoder', architecture: 'crossmodal', vocabSize: task.vocabSize(), numClasses: 2, imageSize: S, patchSize: 4, positional: 'learned', dModel: 32, numHeads: 2, ffDim: 64, numLayers: 2, loss: 'clip', seed: 1 });
    const trainer = new lab.Trainer(model, task, { lr: 3e-3, batchSize: 16, seed: 1, trackAttention: false });
    const steps = 500;
    while (trainer.stepsDone() < steps) trainer.step(Math.min(25, steps - trainer.stepsDone()));
    const held = trainer.evaluate(8);
    const batch = task.sample(8, 1001);
    const maps = model.attentionMaps({ tokens: batch.tokens, images: batch.pixels }, { batch: arg.pair });
    const out = { accuracy: held.accuracy, label: batch.labels.data[arg.pair], maps };
    trainer.delete(); model.delete(); task.delete();
    return out;
  }, { pair: shown.pair });
  assert.equal(ref.label, 1, 'the figure shows a matching pair');
  close(Number(shown.note), ref.accuracy, 1e-6, 'held-out accuracy');
  assert.ok(ref.accuracy > 0.6, `the model learned the task (held-out accuracy ${ref.accuracy})`);
  const [H, T, N] = ref.maps.shape;
  assert.equal(shown.heads.length, H);
  for (let h = 0; h < H; h++) {
    assert.equal(shown.heads[h].length, N);
    for (let n = 0; n < N; n++) close(shown.heads[h][n], ref.maps.data[(h * T + shown.word) * N + n], 1e-5, `head ${h} patch ${n}`);
  }
  // Another word, chosen with the keyboard: its row of the same maps.
  await page.locator('[data-figure="crossmodal"] button[data-word="2"]').focus();
  await page.keyboard.press('Enter');
  const word2 = await page.evaluate(() => Array.from(document.querySelectorAll('figure[data-chart="crossmodal"] g[data-head="1"] rect.patch'), (r) => Number(r.dataset.weight)));
  for (let n = 0; n < N; n++) close(word2[n], ref.maps.data[(1 * T + 2) * N + n], 1e-5, `word 2, head 1, patch ${n}`);
  assert.equal(await page.evaluate(() => document.activeElement?.dataset.word), '2', 'focus stays on the word button');
  assert.equal(new URL(page.url()).searchParams.get('f.crossmodal.word'), '2');
});

test('§5 long range: the trained decoder\'s map is the engine\'s and peaks k back', async () => {
  await open(5);
  const k = 8;
  const ref = await reference((lab, h, arg) => {
    const task = new lab.Task('k_back', { length: 24, vocab: 8, k: arg.k, seed: 1 });
    const model = new lab.Model({ kind: 'decoder', vocabSize: task.vocabSize(), maxLen: Math.max(32, task.seqLen()), dModel: 32, numHeads: 2, numLayers: 1, seed: 1 });
    const trainer = new lab.Trainer(model, task, { lr: 3e-3, batchSize: 16, seed: 1, trackAttention: false });
    const steps = 400;
    while (trainer.stepsDone() < steps) trainer.step(Math.min(25, steps - trainer.stepsDone()));
    const held = trainer.evaluate(8);
    const tokens = Int32Array.from(task.sample(1, 1001).tokens.data);
    const out = { accuracy: held.accuracy, maps: model.attentionMaps(tokens) };
    trainer.delete(); model.delete(); task.delete();
    return out;
  }, { k });
  const [, H, T] = ref.maps.shape;
  const note = await page.evaluate(() => Number(document.querySelector('[data-figure="longrange"] .fig-note').dataset.accuracy));
  close(note, ref.accuracy, 1e-6, 'held-out accuracy');
  let linked = 0;
  for (let h = 0; h < H; h++) {
    const cells = await readMatrix(page, `longrange-h${h}`);
    assert.equal(cells.length, T * T);
    for (const c of cells) {
      if (c.j > c.i) assert.ok(c.masked, `head ${h} [${c.i}][${c.j}] is masked (causal)`);
      else close(c.value, ref.maps.data[(h * T + c.i) * T + c.j], 1e-5, `head ${h} [${c.i}][${c.j}]`);
    }
    // Where the engine's weights peak in each row t >= k: the link k back, for most rows of some head.
    let peaks = 0;
    for (let i = k; i < T; i++) {
      const row = Array.from(ref.maps.data.slice((h * T + i) * T, (h * T + i) * T + i + 1));
      if (row.indexOf(Math.max(...row)) === i - k) peaks++;
    }
    linked = Math.max(linked, peaks / (T - k));
  }
  assert.ok(linked >= 0.8, `a head's weights peak k = ${k} back in ${(100 * linked).toFixed(0)}% of the rows`);
});

test('§6 gradient checkpointing: the bars are the engine\'s bytes kept for backward', async () => {
  await open(6);
  const bars = await page.$$eval('figure[data-chart="checkpointing"] rect[data-kind]', (rs) => rs.map((r) => [Number(r.dataset.layers), r.dataset.kind, Number(r.dataset.bytes)]));
  const ref = await reference((lab) => [2, 4, 8, 16].flatMap((numLayers) => {
    const size = { dModel: 64, numHeads: 4, ffDim: 256, seqLen: 128, batch: 8, numLayers };
    return [[numLayers, 'full', lab.activationMemory(size).total], [numLayers, 'checkpointed', lab.activationMemory({ ...size, gradientCheckpointing: true }).total]];
  }));
  assert.deepEqual(bars, ref);
  for (let i = 0; i < ref.length; i += 2) assert.ok(ref[i][2] > 10 * ref[i + 1][2], `${ref[i][0]} blocks: checkpointing keeps far less`);
});
