// §6: FlashAttention's online softmax over key tiles of width `tile`, replayed on the engine's
// scaled scores: each row's running max and sum after each tile, and the weights it ends with.
import type { AttnLab, Tensor } from '../../../attnlab';
import { maxAbsDiff, randomX, withLayer } from './layer.compute';

export interface FlashRequest { figure: 'flash'; T: number; tile: number; seed: number }
export interface FlashFigure {
  figure: 'flash';
  tile: number;
  scaled: Tensor;
  /** The engine's softmax weights and the tiles' result. */
  weights: Tensor;
  tiled: Tensor;
  /** (T, tiles): running max m and sum l of each row after each tile. */
  runningMax: Tensor;
  runningSum: Tensor;
  maxDiff: number;
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

export function flash(lab: AttnLab, r: FlashRequest): FlashFigure {
  const mha = new lab.MultiHeadAttention({ dModel: 8, numHeads: 1, seed: r.seed });
  return withLayer(mha, (stage) => {
    const x = randomX(r.T, 8, r.seed + 1);
    const scaled = stage(x, {}, 'scaled');
    const weights = stage(x, {}, 'weights');
    const o = onlineSoftmax(scaled, r.tile);
    return { figure: 'flash', tile: r.tile, scaled, weights, tiled: o.tiled, runningMax: o.runningMax, runningSum: o.runningSum, maxDiff: maxAbsDiff(o.tiled.data, weights.data) };
  });
}
