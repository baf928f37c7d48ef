// Derived statistics of a trace (compute layer): everything a view needs beyond the engine's
// stages is gathered here, once per trace, so components only read. Row sums and entropies are
// the engine's (lab.rowStats, attached to each weights matrix by the worker).
import type { Tensor } from '../engine/protocol/messages';
import type { StageData, StageTensor, TraceResult } from '../engine/protocol/walk';

export interface HeadStats {
  /** Softmax entropy (nats) of each query row, with and without scaling (the engine's). */
  entropyScaled: number[];
  entropyUnscaled: number[];
  /** Row sums of the attention weights (should read 1; the engine's). */
  rowSums: number[];
}

export interface Derived {
  T: number;
  S: number;
  C: number;
  H: number;
  Hkv: number;
  D: number;
  /** Query head h reads key/value head kvOf[h]. */
  kvOf: number[];
  heads: HeadStats[];
  /** All heads' unscaled scores and scaled scores (finite values), for the histograms. */
  scoreValues: { unscaled: number[]; scaled: number[] };
  maxEntropy: number;
}

/** An engine row statistic of a weights matrix (lab.rowStats, attached by the worker), as numbers. */
function engineRows(w: StageTensor, what: 'rowSum' | 'rowEntropy'): number[] {
  const v = w[what];
  if (!v) throw new Error(`the engine did not give the weights' ${what} (lab.rowStats)`);
  return Array.from(v);
}

function finite(stage: StageData): number[] {
  const out: number[] = [];
  for (const t of stage.heads) for (const v of t.data) if (Number.isFinite(v)) out.push(v);
  return out;
}

/**
 * Statistics of a trace. `scaledOn`: the engine's scaled scores and weights with scaling on when
 * the trace has it off (else null: the trace's own stages are the scaled ones).
 */
export function derive(tr: TraceResult, scaledOn: { scaled: StageData; weights: StageData } | null = null): Derived {
  const x = tr.stages.x.heads[0];
  const [T, C] = x.shape;
  const w = tr.stages.weights;
  const S = w.heads[0].shape[1];
  const H = w.heads.length;
  const Hkv = tr.stages.k.heads.length;
  const D = C / H;
  const group = H / Hkv;
  const heads: HeadStats[] = w.heads.map((wh, h) => {
    const ws = scaledOn ? scaledOn.weights.heads[h] : wh;
    return {
      entropyScaled: engineRows(ws, 'rowEntropy'),
      entropyUnscaled: engineRows(tr.unscaled.weights.heads[h], 'rowEntropy'),
      rowSums: engineRows(wh, 'rowSum'),
    };
  });
  return {
    T,
    S,
    C,
    H,
    Hkv,
    D,
    kvOf: Array.from({ length: H }, (_, h) => Math.floor(h / group)),
    heads,
    scoreValues: { unscaled: finite(tr.unscaled.scaled), scaled: finite(scaledOn ? scaledOn.scaled : tr.stages.scaled) },
    maxEntropy: Math.log(S),
  };
}

/** The terms of a dot product a·b (what hovering a score or a projected cell shows). */
export function dotTerms(a: ArrayLike<number>, b: ArrayLike<number>): { terms: number[]; sum: number } {
  const terms: number[] = [];
  let sum = 0;
  for (let i = 0; i < a.length; i++) {
    const t = a[i] * b[i];
    terms.push(t);
    sum += t;
  }
  return { terms, sum };
}

export const row = (t: Tensor, i: number): Float32Array => t.data.subarray(i * t.shape[1], (i + 1) * t.shape[1]);
export const col = (t: Tensor, j: number): Float32Array => {
  const [R, K] = t.shape;
  const out = new Float32Array(R);
  for (let i = 0; i < R; i++) out[i] = t.data[i * K + j];
  return out;
};
/** Rows [r0, r1) of a (R, K) matrix, transposed to (K, r1 - r0): the slice of W·ᵀ one head uses. */
export function headSliceT(w: Tensor, r0: number, r1: number): Tensor {
  const K = w.shape[1];
  const n = r1 - r0;
  const out = new Float32Array(K * n);
  for (let c = 0; c < K; c++) for (let j = 0; j < n; j++) out[c * n + j] = w.data[(r0 + j) * K + c];
  return { shape: [K, n], data: out };
}
export function transpose(t: Tensor): Tensor {
  const [R, K] = t.shape;
  const out = new Float32Array(R * K);
  for (let i = 0; i < R; i++) for (let j = 0; j < K; j++) out[j * R + i] = t.data[i * K + j];
  return { shape: [K, R], data: out };
}
