// §8: the article's checks of a hand-written layer, run on the engine's layer: shape, the causal
// mask, gradient flow, and a comparison with a reference (reference_layer.mjs, plain JavaScript)
// stage by stage and gradient by gradient. The reader can break the layer (broken_layer.compute.ts): the
// checks then run on the broken one, and say which of them catch it.
import type { AttnLab, Mask, MultiHeadAttention, StageName, Tensor } from '../../../attnlab';
import { brokenReshapeLayer, type LayerRun } from './broken_layer.compute';
import { maxAbsDiff, own, randomX } from './layer.compute';
import { attentionBackward, type Params } from './reference_layer.mjs';

/** How the layer is broken: not at all, heads split by a plain reshape, the causal mask mirrored. */
export type Breakage = 'none' | 'reshape' | 'mask';
export interface CheckRequest { figure: 'check'; T: number; C: number; H: number; causal: boolean; breakage: Breakage; seed: number }

/** One stage or gradient compared: the layer's and the reference's numbers and their largest difference. */
export interface Compared { name: string; engine: Tensor; plain: Tensor; maxDiff: number; tol: number; pass: boolean }
export interface CheckFigure {
  figure: 'check';
  T: number; C: number; H: number; causal: boolean; breakage: Breakage;
  /** A mirrored mask was asked for without a causal mask to mirror: the layer is unbroken. */
  nothingToFlip: boolean;
  shape: { input: number[]; output: number[]; pass: boolean };
  /** null when the layer is not causal (the test does not apply). */
  mask: { selfWeight: number; futureWeight: number; worst: { head: number; row: number; col: number }; pass: boolean } | null;
  /** ‖∂L/∂W‖ of each weight matrix, L = sum(out ⊙ g) for a seeded g. */
  gradients: { name: string; norm: number }[];
  gradPass: boolean;
  /** q (head 0), the weights (every head), the concatenated heads, the output. */
  stages: Compared[];
  /** ∂L/∂x and each parameter's gradient. */
  grads: Compared[];
}

const WEIGHTS = ['q_proj.weight', 'k_proj.weight', 'v_proj.weight', 'out_proj.weight'];

/** The mirror of the causal mask (1 = forbidden): query i may not see keys j < i. */
function flippedMask(T: number): Mask {
  const data = new Uint8Array(T * T);
  for (let i = 0; i < T; i++) for (let j = 0; j < i; j++) data[i * T + j] = 1;
  return { shape: [T, T], data };
}

/** The engine's own layer: its recorded stages, its output and its backward. */
function engineLayer(mha: MultiHeadAttention, x: Tensor, g: Tensor, H: number, causal: boolean, mask: Mask | null): LayerRun {
  const options = mask ? { attnMask: mask } : { causal };
  const tr = mha.trace(x, { ...options, stages: ['q', 'weights', 'concat', 'output'] as StageName[] });
  try {
    const weights = Array.from({ length: H }, (_, h) => own(tr.stage('weights', h)));
    const back = mha.backward(x, g, options);
    const grads: Record<string, Tensor> = {};
    for (const [n, t] of Object.entries(back.grads)) grads[n] = own(t);
    return { q0: own(tr.stage('q', 0)), weights, concat: own(tr.stage('concat')), output: own(tr.stage('output')), dx: own(back.gradX), grads };
  } finally {
    tr.delete();
  }
}

const compare = (name: string, engine: Tensor, plain: Tensor): Compared => {
  const maxDiff = maxAbsDiff(engine.data, plain.data);
  // float32 sums of a few dozen terms: differences of 1e-6 relative to the values' size.
  const tol = 1e-4 * Math.max(1, ...Array.from(plain.data, Math.abs));
  return { name, engine, plain, maxDiff, tol, pass: engine.shape.join() === plain.shape.join() && maxDiff <= tol };
};

function maskTest(weights: Tensor[], T: number): NonNullable<CheckFigure['mask']> {
  let futureWeight = 0;
  let worst = { head: 0, row: 0, col: 0 };
  weights.forEach((w, head) => {
    for (let row = 0; row < T; row++)
      for (let col = row + 1; col < T; col++)
        if (w.data[row * T + col] > futureWeight) (futureWeight = w.data[row * T + col]), (worst = { head, row, col });
  });
  return { selfWeight: weights[0].data[0], futureWeight, worst, pass: futureWeight === 0 };
}

export function check(lab: AttnLab, r: CheckRequest): CheckFigure {
  const { T, C, H, causal, breakage, seed } = r;
  const D = C / H;
  const mha = new lab.MultiHeadAttention({ dModel: C, numHeads: H, seed });
  try {
    const x = randomX(T, C, seed + 1);
    const g = randomX(T, C, seed + 2);
    const p: Params = {};
    for (const n of mha.parameterNames()) p[n] = own(mha.getParameter(n)).data;
    const nothingToFlip = breakage === 'mask' && !causal;
    const run = breakage === 'reshape'
      ? brokenReshapeLayer(lab, mha, x, g, H, causal)
      : engineLayer(mha, x, g, H, causal, breakage === 'mask' && causal ? flippedMask(T) : null);
    const ref = attentionBackward(x.data, g.data, p, T, C, H, causal);
    const head0 = new Float32Array(T * D);
    for (let t = 0; t < T; t++) head0.set(ref.q.subarray(t * C, t * C + D), t * D);
    const allWeights = (ws: Tensor[]): Tensor => {
      const data = new Float32Array(H * T * T);
      ws.forEach((w, h) => data.set(w.data, h * T * T));
      return { shape: [H, T, T], data };
    };
    const stages = [
      compare('q', run.q0, { shape: [T, D], data: head0 }),
      compare('weights', allWeights(run.weights), { shape: [H, T, T], data: ref.A }),
      compare('concat', run.concat, { shape: [T, C], data: ref.concat }),
      compare('output', run.output, { shape: [T, C], data: ref.out }),
    ];
    const grads = [compare('x', run.dx, { shape: [T, C], data: ref.dx })];
    for (const n of mha.parameterNames()) grads.push(compare(n, run.grads[n], { shape: run.grads[n].shape, data: ref.grads[n] }));
    const gradients = WEIGHTS.map((name) => ({ name, norm: Math.hypot(...Array.from(run.grads[name].data)) }));
    return {
      figure: 'check', T, C, H, causal, breakage, nothingToFlip,
      shape: { input: x.shape, output: run.output.shape, pass: run.output.shape.join() === x.shape.join() },
      mask: causal ? maskTest(run.weights, T) : null,
      gradients,
      gradPass: gradients.every((n) => n.norm > 0 && Number.isFinite(n.norm)),
      stages,
      grads,
    };
  } finally {
    mha.delete();
  }
}
