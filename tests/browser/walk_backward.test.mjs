// The walkthrough's backward steps: every gradient shown is the engine's (lab.attentionGradients
// in a separate engine instance), the end gradients (dX, dW_Q, dW_K, dW_V, dW_O) equal central
// finite differences of the loss ½‖y_r − target‖² computed through MultiHeadAttention.forward,
// and the intermediate ones are tied to them by the chain rule (dW_Q from dQ, dQ from dScores,
// softmax's Jacobian, dContext from dConcat).
//   node --test tests/browser/walk_backward.test.mjs
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readMatrix, screenshot, settle, traceMainThreadTasks, useWalkthroughPage, loadReferenceEngine } from './support.mjs';

const ctx = useWalkthroughPage({ isolation: true });

/** The page's request, and the engine's gradients and finite differences for it, from a separate single-threaded engine. */
async function reference(page) {
  await loadReferenceEngine(page);
  return page.evaluate(async () => {
    const s = window.__attnlab.walk();
    const req = s.trace.request;
    const bw = s.trace.backward;
    const lab = window.__refLab;
    const [T, C] = req.x.shape;
    const layer = { dModel: req.dModel, numHeads: req.numHeads, numKvHeads: req.numKvHeads, seed: req.seed };
    const options = {
      causal: req.causal,
      keyPaddingMask: req.keyPaddingMask ? { shape: [T], data: req.keyPaddingMask } : null,
      scale: req.scale,
      positional: req.positional,
      window: req.window ?? 0,
      globalTokens: req.globalTokens ?? 0,
    };
    const r = bw.lossRow;
    const target = { shape: [C], data: new Float32Array(bw.target.data) };
    const g = lab.attentionGradients(layer, req.x, { ...options, lossRow: r, target });

    // The plain JS API: the same layer, its loss and backward.
    const mha = new lab.MultiHeadAttention({ ...layer, bias: true });
    const loss = (x) => {
      const y = mha.forward(x, options).data;
      let l = 0;
      for (let j = 0; j < C; j++) l += 0.5 * (y[r * C + j] - target.data[j]) ** 2;
      return l;
    };
    const dout = new Float32Array(T * C);
    const y0 = mha.forward(req.x, options).data;
    for (let j = 0; j < C; j++) dout[r * C + j] = y0[r * C + j] - target.data[j];
    const plain = mha.backward(req.x, { shape: [T, C], data: dout }, options);

    // Central differences, eps = 1e-2 (float32 forward: the loss is summed in double).
    const eps = 1e-2;
    const fdX = [];
    for (let k = 0; k < T * C; k++) {
      const xp = new Float32Array(req.x.data), xm = new Float32Array(req.x.data);
      xp[k] += eps;
      xm[k] -= eps;
      fdX.push((loss({ shape: [T, C], data: xp }) - loss({ shape: [T, C], data: xm })) / (2 * eps));
    }
    const fdW = {};
    for (const name of ['q_proj.weight', 'k_proj.weight', 'v_proj.weight', 'out_proj.weight']) {
      const p = mha.getParameter(name);
      fdW[name] = [];
      for (let k = 0; k < p.data.length; k += 3) {
        const orig = p.data[k];
        const at = (v) => {
          const q = new Float32Array(p.data);
          q[k] = v;
          mha.setParameter(name, { shape: p.shape, data: q });
          return loss(req.x);
        };
        fdW[name].push([k, (at(orig + eps) - at(orig - eps)) / (2 * eps)]);
        mha.setParameter(name, p);
      }
    }
    const k = mha.trace(req.x, { ...options, stages: ['x', 'k'] });
    const keys = Array.from({ length: req.numKvHeads }, (_, h) => Array.from(k.stage('k', h).data));
    const layerInput = Array.from(k.stage('x').data); // x with the sinusoidal table added, if any
    k.delete();
    mha.delete();
    const arr = (t) => ({ shape: t.shape, data: Array.from(t.data) });
    const heads = (list) => list.map(arr);
    return {
      req: { T, C, H: req.numHeads, Hkv: req.numKvHeads, x: layerInput, positional: req.positional },
      page: { loss: bw.loss, lossRow: bw.lossRow },
      g: {
        loss: g.loss,
        output: arr(g.output), gradOutput: arr(g.gradOutput), gradConcat: arr(g.gradConcat), gradContext: heads(g.gradContext),
        weights: heads(g.weights), gradWeights: heads(g.gradWeights), gradScaled: heads(g.gradScaled), gradScores: heads(g.gradScores),
        rowDot: arr(g.rowDot), scaleFactor: g.scaleFactor, gradQ: heads(g.gradQ), gradK: heads(g.gradK), gradV: heads(g.gradV),
        gradX: arr(g.gradX), grads: Object.fromEntries(Object.entries(g.grads).map(([n, t]) => [n, arr(t)])),
      },
      plain: { gradX: arr(plain.gradX), grads: Object.fromEntries(Object.entries(plain.grads).map(([n, t]) => [n, arr(t)])) },
      fdX,
      fdW,
      keys,
    };
  });
}

const close = (a, b, tol) => Math.abs(a - b) <= tol * (1 + Math.abs(b));

test('the engine’s gradients equal finite differences through the JS API, and the chain rule ties every stage to them', async () => {
  const ref = await reference(ctx.page);
  const { T, C, H, Hkv } = ref.req;
  const g = ref.g;
  assert.ok(ref.page.loss > 0, 'a non-zero loss');
  assert.equal(g.loss, ref.page.loss, 'the page’s loss is the engine’s');
  // MultiHeadAttention.backward with dOutput = y_r − target (its flash path sums in another order: to float32 rounding).
  g.gradX.data.forEach((v, k) => assert.ok(close(v, ref.plain.gradX.data[k], 1e-5), `dX[${k}] = ${v} vs MultiHeadAttention.backward ${ref.plain.gradX.data[k]}`));
  for (const [n, t] of Object.entries(ref.plain.grads)) t.data.forEach((v, k) => assert.ok(close(g.grads[n].data[k], v, 1e-5), `${n}[${k}] vs MultiHeadAttention.backward`));
  // Finite differences.
  ref.fdX.forEach((fd, k) => assert.ok(close(g.gradX.data[k], fd, 2e-2), `dX[${k}] = ${g.gradX.data[k]} vs finite difference ${fd}`));
  for (const [n, list] of Object.entries(ref.fdW)) {
    for (const [k, fd] of list) assert.ok(close(g.grads[n].data[k], fd, 2e-2), `${n}[${k}] = ${g.grads[n].data[k]} vs finite difference ${fd}`);
  }
  // dOutput: y_r − target in row r, 0 elsewhere.
  for (let i = 0; i < T; i++) for (let j = 0; j < C; j++) if (i !== ref.page.lossRow) assert.equal(g.gradOutput.data[i * C + j], 0);
  const D = C / H;
  const group = H / Hkv;
  for (let h = 0; h < H; h++) {
    // dContext is the head's columns of dConcat.
    for (let i = 0; i < T; i++) for (let d = 0; d < D; d++) assert.equal(g.gradContext[h].data[i * D + d], g.gradConcat.data[i * C + h * D + d]);
    const w = g.weights[h].data, dw = g.gradWeights[h].data, ds = g.gradScaled[h].data, S = g.weights[h].shape[1];
    for (let i = 0; i < T; i++) {
      let rowSum = 0;
      let delta = 0;
      for (let j = 0; j < S; j++) delta += w[i * S + j] * dw[i * S + j];
      assert.ok(close(g.rowDot.data[h * T + i], delta, 1e-4), `δ[${h}][${i}]`);
      for (let j = 0; j < S; j++) {
        // softmax's Jacobian, as the page states it: ds = w ⊙ (dw − δ)
        assert.ok(close(ds[i * S + j], w[i * S + j] * (dw[i * S + j] - delta), 1e-4), `ds[${h}][${i}][${j}]`);
        assert.ok(close(g.gradScores[h].data[i * S + j], ds[i * S + j] * g.scaleFactor, 1e-5), `dScores = ds · scale`);
        rowSum += ds[i * S + j];
      }
      assert.ok(Math.abs(rowSum) < 1e-5, `row ${i} of ds sums to 0 (${rowSum})`);
    }
    assert.notEqual(ref.req.positional, 'rope', 'the default page has no RoPE (dQ is rotated back under it)');
    // dQ = dScores · K.
    const K = ref.keys[Math.floor(h / group)];
    for (let i = 0; i < T; i++) {
      for (let d = 0; d < D; d++) {
        let s = 0;
        for (let j = 0; j < S; j++) s += g.gradScores[h].data[i * S + j] * K[j * D + d];
        assert.ok(close(g.gradQ[h].data[i * D + d], s, 1e-4), `dQ[${h}][${i}][${d}] = dScores·K`);
      }
    }
    // dW_Q rows of head h = dQ_hᵀ · x.
    for (let d = 0; d < D; d++) {
      for (let c = 0; c < C; c++) {
        let s = 0;
        for (let i = 0; i < T; i++) s += g.gradQ[h].data[i * D + d] * ref.req.x[i * C + c];
        assert.ok(close(g.grads['q_proj.weight'].data[(h * D + d) * C + c], s, 1e-4), `dW_Q[${h * D + d}][${c}] = dQᵀ·x`);
      }
    }
  }
});

// Which page matrix shows which gradient, per backward step (head 0).
const SHOWN = {
  'back-loss': [['grad-output', (g) => g.gradOutput]],
  'back-out-proj': [['grad-output', (g) => g.gradOutput], ['grad-concat', (g) => g.gradConcat], ['grad-context', (g) => g.gradContext[0]]],
  'back-weighted-sum': [['grad-context', (g) => g.gradContext[0]], ['grad-weights', (g) => g.gradWeights[0]], ['grad-v', (g) => g.gradV[0]]],
  'back-softmax': [['back-weights', (g) => g.weights[0]], ['grad-weights', (g) => g.gradWeights[0]], ['grad-scaled', (g) => g.gradScaled[0]], ['grad-scores', (g) => g.gradScores[0]]],
  'back-qkv': [['grad-scores', (g) => g.gradScores[0]], ['grad-q', (g) => g.gradQ[0]], ['grad-k', (g) => g.gradK[0]], ['grad-v', (g) => g.gradV[0]]],
  'back-params': [['grad-wq', (g) => g.grads['q_proj.weight']], ['grad-wk', (g) => g.grads['k_proj.weight']], ['grad-wv', (g) => g.grads['v_proj.weight']], ['grad-wo', (g) => g.grads['out_proj.weight']], ['grad-x', (g) => g.gradX]],
};

test('each backward step shows the engine’s gradients exactly (hover values), and the softmax step’s hover names w, dw and δ', async () => {
  const { page } = ctx;
  const ref = await reference(page);
  const first = await page.evaluate(() => window.__attnlab.walk().trace && document.querySelectorAll('nav.steps button[data-step]').length);
  assert.equal(first, 18, 'eleven forward steps, six backward ones and the KV cache');
  for (let k = 11; k < 17; k++) {
    await page.locator(`nav.steps button[data-step="${k}"]`).click();
    await page.waitForFunction((n) => window.__attnlab.walk().step === n, k);
    await settle(page);
    const id = await page.locator('.stage').getAttribute('data-stage');
    assert.ok(SHOWN[id], `step ${k + 1} is a backward step (${id})`);
    for (const [name, pick] of SHOWN[id]) {
      const t = pick(ref.g);
      const cells = await readMatrix(page, name);
      assert.equal(cells.length, t.data.length, `${id}: ${name} shows ${cells.length} cells, engine has ${t.data.length}`);
      for (const c of cells) {
        const v = t.data[c.i * t.shape[1] + c.j];
        assert.equal(Math.fround(c.value), v, `${id}: ${name}[${c.i}][${c.j}] hover value ${c.value} != engine ${v}`);
      }
    }
    await page.waitForTimeout(300);
    await screenshot(page, `walk-${k + 1}-${id}`);
  }
  await page.locator('nav.steps button[data-step="14"]').click();
  await settle(page);
  const cell = page.locator('figure[data-matrix="grad-scaled"] g.cell[data-i="1"][data-j="0"]');
  await cell.hover();
  const tip = page.locator('.tooltip');
  await tip.waitFor({ state: 'visible' });
  const text = await tip.textContent();
  assert.ok(text.includes(await cell.getAttribute('data-value')), `tooltip '${text}' has the exact value`);
  assert.match(text, /w = .*dw = .*δ = /s);
  await screenshot(page, 'walk-backward-hover');
  await page.mouse.move(0, 0);
});

test('stepping through the backward steps and the KV cache has no main-thread task over 50 ms of CPU', async () => {
  const { page } = ctx;
  await page.locator('nav.steps button[data-step="11"]').click();
  await settle(page);
  const tasks = await traceMainThreadTasks(page, async () => {
    for (let k = 12; k < 18; k++) {
      await page.locator(`nav.steps button[data-step="${k}"]`).click();
      await page.waitForFunction((n) => window.__attnlab.walk().step === n, k);
      await settle(page);
    }
  });
  const long = tasks.filter((t) => t.cpuMs > 50);
  assert.deepEqual(long, [], `main-thread tasks over 50 ms of CPU: ${JSON.stringify(long)}`);
});
