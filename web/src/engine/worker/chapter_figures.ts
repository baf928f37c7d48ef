// The chapters' live figures, computed in the engine worker. Every matrix comes from the engine
// (MultiHeadAttention.forward / trace, lab.sparseLayout); the few numbers derived here (a max
// difference, an entropy, FlashAttention's running max and sum) are re-derived from the engine by
// tests/browser/chapters_figures.test.mjs.
import type { AttnLab, ForwardOptions, MultiHeadAttention, StageName } from '../../../attnlab';
import { mulberry32, normals } from '../../util/rng';
import type { FigureData, FigureRequest } from '../protocol/chapters';
import type { Tensor } from '../protocol/messages';
import { crossmodal, forecast, longRange, type Progress } from './chapter_trained';

const own = (t: Tensor): Tensor => ({ shape: [...t.shape], data: new Float32Array(t.data) });
const randomX = (T: number, C: number, seed: number): Tensor => ({ shape: [T, C], data: normals(mulberry32(seed), T * C) });

/** The (C, C) permutation matrix that moves x's column (c + shift) mod C to column c (shift 0: I). */
function cyclic(C: number, shift: number): Tensor {
  const data = new Float32Array(C * C);
  for (let i = 0; i < C; i++) data[i * C + ((i + shift) % C)] = 1;
  return { shape: [C, C], data };
}

/**
 * A one-head layer without biases whose W_Q is the identity and W_K a cyclic shift by `shiftK`:
 * q = x, k = x with its columns rotated. With shiftK = 0, scores = x·xᵀ; with shiftK = 1, every
 * score (the diagonal too) is a sum of C products of independent entries: variance C for N(0, 1) x.
 */
function identityQK(lab: AttnLab, C: number, shiftK = 0): MultiHeadAttention {
  const mha = new lab.MultiHeadAttention({ dModel: C, numHeads: 1, bias: false, seed: 0 });
  mha.setParameter('q_proj.weight', cyclic(C, 0));
  mha.setParameter('k_proj.weight', cyclic(C, shiftK));
  return mha;
}

/** Runs `fn` on a layer and deletes the layer and every trace it made, even when fn throws. */
function withLayer<R>(mha: MultiHeadAttention, fn: (stage: (x: Tensor, o: ForwardOptions, name: StageName, head?: number) => Tensor) => R): R {
  const made: { delete(): void }[] = [mha];
  try {
    return fn((x, o, name, head = 0) => {
      const tr = mha.trace(x, { ...o, stages: [name] });
      made.push(tr);
      return own(name === 'x' || name === 'concat' || name === 'output' ? tr.stage(name) : tr.stage(name, head));
    });
  } finally {
    for (const d of made) d.delete();
  }
}

export function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

/** Row means of the softmax's entropy −Σ p ln p and of ‖diag(p) − ppᵀ‖_F = sqrt(Σp² − 2Σp³ + (Σp²)²). */
export function softmaxStats(weights: Tensor, scores: Tensor) {
  const [T, S] = weights.shape;
  let entropy = 0;
  let grad = 0;
  for (let i = 0; i < T; i++) {
    let h = 0, p2 = 0, p3 = 0;
    for (let j = 0; j < S; j++) {
      const p = weights.data[i * S + j];
      if (p > 0) h -= p * Math.log(p);
      p2 += p * p;
      p3 += p * p * p;
    }
    entropy += h;
    grad += Math.sqrt(Math.max(0, p2 - 2 * p3 + p2 * p2));
  }
  let mean = 0, sq = 0;
  for (const v of scores.data) mean += v;
  mean /= scores.data.length;
  for (const v of scores.data) sq += (v - mean) ** 2;
  return { entropy: entropy / T, gradNorm: grad / T, scoreStd: Math.sqrt(sq / scores.data.length) };
}

/** Online softmax (Milakov & Gimelshein 2018; FlashAttention's inner loop) of each row over key tiles. */
export function onlineSoftmax(scaled: Tensor, tile: number) {
  const [T, S] = scaled.shape;
  const tiles = Math.ceil(S / tile);
  const runningMax = new Float32Array(T * tiles);
  const runningSum = new Float32Array(T * tiles);
  const out = new Float32Array(T * S);
  for (let i = 0; i < T; i++) {
    let m = -Infinity;
    let l = 0;
    for (let b = 0; b < tiles; b++) {
      let tm = -Infinity;
      for (let j = b * tile; j < Math.min(S, (b + 1) * tile); j++) tm = Math.max(tm, scaled.data[i * S + j]);
      const mNew = Math.max(m, tm);
      l = l * (m === -Infinity ? 0 : Math.exp(m - mNew));
      for (let j = b * tile; j < Math.min(S, (b + 1) * tile); j++) l += Math.exp(scaled.data[i * S + j] - mNew);
      m = mNew;
      runningMax[i * tiles + b] = m;
      runningSum[i * tiles + b] = l;
    }
    for (let j = 0; j < S; j++) out[i * S + j] = Math.exp(scaled.data[i * S + j] - m) / l;
  }
  return { tiles, runningMax: { shape: [T, tiles], data: runningMax }, runningSum: { shape: [T, tiles], data: runningSum }, tiled: { shape: [T, S], data: out } };
}

function permuteRows(x: Tensor, perm: number[]): Tensor {
  const [T, C] = x.shape;
  const data = new Float32Array(T * C);
  for (let i = 0; i < T; i++) data.set(x.data.subarray(perm[i] * C, perm[i] * C + C), i * C);
  return { shape: [T, C], data };
}

export function computeFigure(lab: AttnLab, r: FigureRequest, progress: Progress = () => {}): FigureData {
  switch (r.figure) {
    case 'chain': {
      const mha = new lab.MultiHeadAttention({ dModel: 8, numHeads: 1, seed: r.seed });
      return withLayer(mha, (stage) => ({ figure: 'chain', weights: stage(randomX(r.T, 8, r.seed), {}, 'weights') }));
    }
    case 'dk': {
      const x = randomX(r.T, r.dk, r.seed);
      return withLayer(identityQK(lab, r.dk, 1), (stage) => {
        const scaledScores = stage(x, { scale: true }, 'scaled');
        const scaledWeights = stage(x, { scale: true }, 'weights');
        const unscaledScores = stage(x, { scale: false }, 'scaled');
        const unscaledWeights = stage(x, { scale: false }, 'weights');
        return {
          figure: 'dk', dk: r.dk, scaledScores, scaledWeights, unscaledScores, unscaledWeights,
          stats: { scaled: softmaxStats(scaledWeights, scaledScores), unscaled: softmaxStats(unscaledWeights, unscaledScores) },
        };
      });
    }
    case 'reshape': {
      const D = r.C / r.H;
      const mha = new lab.MultiHeadAttention({ dModel: r.C, numHeads: r.H, seed: r.seed });
      return withLayer(mha, (stage) => {
        const x = randomX(r.T, r.C, r.seed + 1);
        const right: Tensor[] = [];
        for (let h = 0; h < r.H; h++) right.push(stage(x, {}, 'q', h));
        // (T, C) with head h in columns h·D .. h·D + D − 1: what x·W_Qᵀ + b holds before the split.
        const q = new Float32Array(r.T * r.C);
        for (let h = 0; h < r.H; h++) for (let t = 0; t < r.T; t++) q.set(right[h].data.subarray(t * D, t * D + D), t * r.C + h * D);
        // The trap: view(H, T, D) without transposing reads consecutive memory as one head.
        const wrong: Tensor[] = [];
        const wrongTokens: number[][] = [];
        for (let h = 0; h < r.H; h++) {
          wrong.push({ shape: [r.T, D], data: q.slice(h * r.T * D, (h + 1) * r.T * D) });
          wrongTokens.push(Array.from({ length: r.T }, (_, t) => Math.floor((h * r.T * D + t * D) / r.C)));
        }
        return { figure: 'reshape', q: { shape: [r.T, r.C], data: q }, right, wrong, wrongTokens };
      });
    }
    case 'permutation': {
      const mha = new lab.MultiHeadAttention({ dModel: r.C, numHeads: 2, seed: r.seed });
      try {
        const x = randomX(r.T, r.C, r.seed + 1);
        const o = { positional: r.positional };
        const y = own(mha.forward(x, o));
        const yOfPermuted = own(mha.forward(permuteRows(x, r.perm), o));
        const permutedY = permuteRows(y, r.perm);
        return { figure: 'permutation', x, y, yOfPermuted, permutedY, maxDiff: maxAbsDiff(yOfPermuted.data, permutedY.data) };
      } finally {
        mha.delete();
      }
    }
    case 'pe':
      return withLayer(identityQK(lab, r.C), (stage) => {
        // The table the engine adds: the recorded x of an all-zero input.
        const table = stage({ shape: [r.T, r.C], data: new Float32Array(r.T * r.C) }, { positional: 'sinusoidal' }, 'x');
        const similarity = stage(table, { scale: 1 }, 'scaled');
        return { figure: 'pe', table, similarity };
      });
    case 'rope':
      return withLayer(identityQK(lab, r.C), (stage) => {
        const v = normals(mulberry32(r.seed), r.C);
        const x = new Float32Array(r.T * r.C);
        for (let t = 0; t < r.T; t++) x.set(v, t * r.C);
        const scores = stage({ shape: [r.T, r.C], data: x }, { positional: 'rope', scale: 1 }, 'scaled');
        let spread = 0;
        for (let d = -(r.T - 1); d < r.T; d++) {
          let lo = Infinity, hi = -Infinity;
          for (let m = Math.max(0, -d); m < Math.min(r.T, r.T - d); m++) {
            const s = scores.data[m * r.T + m + d];
            lo = Math.min(lo, s);
            hi = Math.max(hi, s);
          }
          spread = Math.max(spread, hi - lo);
        }
        return { figure: 'rope', scores, diagonalSpread: spread };
      });
    case 'sparse': {
      const blocks = lab.sparseLayout(r.T, r.T, { blockSize: r.blockSize, windowBlocks: r.windowBlocks, globalBlocks: r.globalBlocks, randomBlocks: r.randomBlocks });
      const mha = new lab.MultiHeadAttention({ dModel: 8, numHeads: 1, seed: 0 });
      return withLayer(mha, (stage) => {
        const windowMask = stage(randomX(r.T, 8, 1), { window: r.window, globalTokens: r.globalTokens }, 'masked');
        // Positions a live block covers (the last block row and column may be cut by T).
        const nb = blocks.shape[1];
        const span = (b: number) => Math.min(r.T, (b + 1) * r.blockSize) - b * r.blockSize;
        let blockLive = 0;
        for (let bi = 0; bi < blocks.shape[0]; bi++) for (let bj = 0; bj < nb; bj++) if (blocks.data[bi * nb + bj]) blockLive += span(bi) * span(bj);
        let windowLive = 0;
        for (const v of windowMask.data) windowLive += Number.isFinite(v) ? 1 : 0;
        return {
          figure: 'sparse', blocks: { shape: [...blocks.shape], data: new Uint8Array(blocks.data) }, windowMask,
          full: r.T * r.T, blockLive, windowLive,
        };
      });
    }
    case 'masks': {
      const mha = new lab.MultiHeadAttention({ dModel: 8, numHeads: 1, seed: r.seed });
      return withLayer(mha, (stage) => {
        const x = randomX(r.T, 8, r.seed + 1);
        const pad = { shape: [r.T], data: Uint8Array.from({ length: r.T }, (_, j) => (j >= r.T - r.pad ? 1 : 0)) };
        return {
          figure: 'masks',
          causal: stage(x, { causal: true }, 'masked'),
          padding: stage(x, { keyPaddingMask: pad }, 'masked'),
          both: stage(x, { causal: true, keyPaddingMask: pad }, 'masked'),
          weightsBoth: stage(x, { causal: true, keyPaddingMask: pad }, 'weights'),
        };
      });
    }
    case 'fp16': {
      const C = 16;
      const x = randomX(r.T, C, r.seed);
      for (let i = 0; i < x.data.length; i++) x.data[i] *= Math.sqrt(r.magnitude);
      return withLayer(identityQK(lab, C), (stage) => {
        const scaled = stage(x, {}, 'scaled');
        const naive = stage(x, { precision: 'fp16', softmaxPrecision: 'same', stableSoftmax: false }, 'weights');
        const fp32Softmax = stage(x, { precision: 'fp16', softmaxPrecision: 'fp32' }, 'weights');
        const nonFinite = (t: Tensor) => t.data.reduce((n, v) => n + (Number.isFinite(v) ? 0 : 1), 0);
        let maxScore = 0;
        for (const v of scaled.data) maxScore = Math.max(maxScore, Math.abs(v));
        return { figure: 'fp16', scaled, naive, fp32Softmax, maxScore, naiveNonFinite: nonFinite(naive), fixedNonFinite: nonFinite(fp32Softmax) };
      });
    }
    case 'flash': {
      const mha = new lab.MultiHeadAttention({ dModel: 8, numHeads: 1, seed: r.seed });
      return withLayer(mha, (stage) => {
        const x = randomX(r.T, 8, r.seed + 1);
        const scaled = stage(x, {}, 'scaled');
        const weights = stage(x, {}, 'weights');
        const o = onlineSoftmax(scaled, r.tile);
        return { figure: 'flash', tile: r.tile, scaled, weights, tiled: o.tiled, runningMax: o.runningMax, runningSum: o.runningSum, maxDiff: maxAbsDiff(o.tiled.data, weights.data) };
      });
    }
    case 'vision':
      return vision(lab, r.arch, r.layer, r.seed);
    case 'check':
      return plainCheck(lab, r.T, r.C, r.H, r.seed);
    case 'crossmodal':
      return crossmodal(lab, r.steps, r.seed, progress);
    case 'longrange':
      return longRange(lab, r.k, r.steps, r.seed, progress);
    case 'forecast':
      return forecast(lab, r.positional, r.steps, r.seed, progress);
    case 'checkpointing': {
      const size = { dModel: r.dModel, numHeads: r.numHeads, ffDim: 4 * r.dModel, seqLen: r.seqLen, batch: r.batch };
      const rows = r.depths.map((layers) => ({
        layers,
        full: lab.activationMemory({ ...size, numLayers: layers }).total,
        checkpointed: lab.activationMemory({ ...size, numLayers: layers, gradientCheckpointing: true }).total,
      }));
      return { figure: 'checkpointing', rows, dModel: r.dModel, seqLen: r.seqLen, batch: r.batch };
    }
  }
}

/** §7: one image of the shapes task through an untrained ViT / Swin (patches of 2 pixels, windows of 4 patches). */
function vision(lab: AttnLab, arch: 'vit' | 'swin', layer: number, seed: number): FigureData {
  const task = new lab.Task('shapes', { seed });
  let model: InstanceType<AttnLab['Model']> | null = null;
  try {
    const batch = task.sample(1, seed);
    const S = task.imageSize();
    const image: Tensor = { shape: [S, S], data: new Float32Array(batch.pixels!.data) };
    model = new lab.Model({ kind: 'encoder', architecture: arch, imageSize: S, patchSize: 2, swinWindow: 4, numClasses: task.numClasses(), dModel: 16, numHeads: 2, numLayers: 2, seed });
    const maps = own(model.attentionMaps(image, { layer }));
    return { figure: 'vision', image, label: batch.labels!.data[0], layout: { ...model.windowLayout(layer) }, maps };
  } finally {
    model?.delete();
    task.delete();
  }
}

/** y = x·Wᵀ + b for x (T, I), W (O, I). */
function linear(x: Tensor, w: Tensor, b: Tensor | undefined): Tensor {
  const [T, I] = x.shape;
  const O = w.shape[0];
  const y = new Float32Array(T * O);
  for (let t = 0; t < T; t++)
    for (let o = 0; o < O; o++) {
      let s = b ? b.data[o] : 0;
      for (let i = 0; i < I; i++) s += x.data[t * I + i] * w.data[o * I + i];
      y[t * O + o] = s;
    }
  return { shape: [T, O], data: y };
}

/** §8: the engine's stages of one layer next to the textbook formulas evaluated in plain JavaScript. */
function plainCheck(lab: AttnLab, T: number, C: number, H: number, seed: number): FigureData {
  const mha = new lab.MultiHeadAttention({ dModel: C, numHeads: H, seed });
  const D = C / H;
  const x = randomX(T, C, seed + 1);
  const p: Record<string, Tensor> = {};
  for (const n of mha.parameterNames()) p[n] = own(mha.getParameter(n));
  return withLayer(mha, (stage) => {
    const q = linear(x, p['q_proj.weight'], p['q_proj.bias']);
    const k = linear(x, p['k_proj.weight'], p['k_proj.bias']);
    const v = linear(x, p['v_proj.weight'], p['v_proj.bias']);
    const weights = new Float32Array(T * T);
    const concat = new Float32Array(T * C);
    for (let h = 0; h < H; h++) {
      for (let i = 0; i < T; i++) {
        const row = new Float64Array(T);
        let m = -Infinity;
        for (let j = 0; j < T; j++) {
          let s = 0;
          for (let d = 0; d < D; d++) s += q.data[i * C + h * D + d] * k.data[j * C + h * D + d];
          row[j] = s / Math.sqrt(D);
          m = Math.max(m, row[j]);
        }
        let sum = 0;
        for (let j = 0; j < T; j++) sum += (row[j] = Math.exp(row[j] - m));
        for (let j = 0; j < T; j++) {
          const w = row[j] / sum;
          if (h === 0) weights[i * T + j] = w;
          for (let d = 0; d < D; d++) concat[i * C + h * D + d] += w * v.data[j * C + h * D + d];
        }
      }
    }
    const out = linear({ shape: [T, C], data: concat }, p['out_proj.weight'], p['out_proj.bias']);
    const head0 = (t: Tensor): Tensor => {
      const d = new Float32Array(T * D);
      for (let i = 0; i < T; i++) d.set(t.data.subarray(i * C, i * C + D), i * D);
      return { shape: [T, D], data: d };
    };
    const rows: { name: string; engine: Tensor; plain: Tensor }[] = [
      { name: 'q', engine: stage(x, {}, 'q', 0), plain: head0(q) },
      { name: 'weights', engine: stage(x, {}, 'weights', 0), plain: { shape: [T, T], data: weights } },
      { name: 'concat', engine: stage(x, {}, 'concat'), plain: { shape: [T, C], data: concat } },
      { name: 'output', engine: stage(x, {}, 'output'), plain: out },
    ];
    return { figure: 'check', stages: rows.map((r) => ({ ...r, maxDiff: maxAbsDiff(r.engine.data, r.plain.data) })) };
  });
}
