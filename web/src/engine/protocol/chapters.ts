// The chapters' messages to the engine worker: one figure request per live figure (computed by
// engine/worker/chapter_figures.ts) and the experiments of the article (lab.experiments,
// lab.runExperiment). Plain data only; Float32Arrays are transferred.
import type { ExperimentInfo, ExperimentMessage, ExperimentOptions, ExperimentParameter, ExperimentProgress, ExperimentResult, Tensor } from '../../../attnlab';

export type { ExperimentInfo, ExperimentMessage, ExperimentOptions, ExperimentParameter, ExperimentProgress, ExperimentResult };

/** What each figure asks of the engine. Inputs are seeded, so a request always gives the same numbers. */
export type FigureRequest =
  /** §1: attention weights of one random layer over T tokens (the all-to-all graph's edges). */
  | { figure: 'chain'; T: number; seed: number }
  /** §2: x of width dk with N(0, 1) entries, q = x, k = x with columns rotated by one: scores with and without 1/sqrt(dk). */
  | { figure: 'dk'; dk: number; T: number; seed: number }
  /** §3: the engine's per-head q (the right split) and the same numbers read as a plain reshape. */
  | { figure: 'reshape'; T: number; C: number; H: number; seed: number }
  /** §4: a sentence and its permutation through one layer, with a positional encoding or none. */
  | { figure: 'permutation'; T: number; C: number; seed: number; perm: number[]; positional: 'none' | 'sinusoidal' | 'rope' }
  /** §4: the sinusoidal table P (T, C) and P·Pᵀ (scores of x = P with W_Q = W_K = I, scale 1). */
  | { figure: 'pe'; T: number; C: number }
  /** §4: RoPE scores q_m·k_n of one vector repeated at every position (W_Q = W_K = I). */
  | { figure: 'rope'; T: number; C: number; seed: number }
  /** §5: a block-sparse layout (lab.sparseLayout) and a sliding window's mask (trace 'masked'). */
  | { figure: 'sparse'; T: number; blockSize: number; windowBlocks: number; globalBlocks: number; randomBlocks: number; window: number; globalTokens: number }
  /** §6: the masked scores with a causal mask, a padding mask (last `pad` keys) and both. */
  | { figure: 'masks'; T: number; pad: number; seed: number }
  /** §6: fp16 emulation of the naive softmax on scores of size ~`magnitude`: per-stage overflow counts. */
  | { figure: 'fp16'; T: number; magnitude: number; seed: number }
  /** §6: FlashAttention's online softmax over key tiles of width `tile`, replayed on the engine's scaled scores. */
  | { figure: 'flash'; T: number; tile: number; seed: number }
  /** §7: a shapes image through an untrained ViT or Swin: where the windows sit and their attention. */
  | { figure: 'vision'; arch: 'vit' | 'swin'; layer: number; seed: number }
  /** §8: one engine layer's stages and a plain re-computation from x and the parameters. */
  | { figure: 'check'; T: number; C: number; H: number; seed: number }
  /** §7: a crossmodal model trained `steps` steps on caption_match; each word's attention over the patches. */
  | { figure: 'crossmodal'; steps: number; seed: number }
  /** §5: a one-layer decoder trained `steps` steps on k_back (recall the token k back); its attention map. */
  | { figure: 'longrange'; k: number; steps: number; seed: number }
  /** §7: a Transformer forecaster (sinusoidal or time-aware positions) trained `steps` steps on the series task; its forecast of a held-out series. */
  | { figure: 'forecast'; positional: 'sinusoidal' | 'time'; steps: number; seed: number }
  /** §6: bytes the blocks keep for backward (lab.activationMemory) at each depth, without and with gradient checkpointing. */
  | { figure: 'checkpointing'; depths: number[]; dModel: number; numHeads: number; seqLen: number; batch: number };

export interface ChainFigure { figure: 'chain'; weights: Tensor }
export interface DkFigure {
  figure: 'dk';
  dk: number;
  /** (T, T) engine stages, scaled = scores / sqrt(dk). */
  scaledScores: Tensor;
  scaledWeights: Tensor;
  unscaledScores: Tensor;
  unscaledWeights: Tensor;
  /** Mean over rows of the softmax's entropy (nats) and of its Jacobian's Frobenius norm. */
  stats: { scaled: { entropy: number; gradNorm: number; scoreStd: number }; unscaled: { entropy: number; gradNorm: number; scoreStd: number } };
}
export interface ReshapeFigure {
  figure: 'reshape';
  /** (T, C) all heads' q side by side (the engine's per-head q, concatenated). */
  q: Tensor;
  /** H tensors (T, D): the engine's split (right) and the buffer read as (H, T, D) (wrong). */
  right: Tensor[];
  wrong: Tensor[];
  /** For each wrong head, row t: the token whose numbers it holds (-1 when they are mixed). */
  wrongTokens: number[][];
}
export interface PermutationFigure {
  figure: 'permutation';
  x: Tensor;
  /** f(x), f(πx), and π applied to f(x). */
  y: Tensor;
  yOfPermuted: Tensor;
  permutedY: Tensor;
  /** max |f(πx) − π f(x)|. */
  maxDiff: number;
}
export interface PeFigure { figure: 'pe'; table: Tensor; similarity: Tensor }
export interface RopeFigure {
  figure: 'rope';
  scores: Tensor;
  /** Largest spread (max − min) of the scores along one diagonal m − n = const. */
  diagonalSpread: number;
}
export interface SparseFigure { figure: 'sparse'; blocks: { shape: number[]; data: Uint8Array }; windowMask: Tensor; full: number; blockLive: number; windowLive: number }
export interface MasksFigure { figure: 'masks'; causal: Tensor; padding: Tensor; both: Tensor; weightsBoth: Tensor }
export interface Fp16Figure {
  figure: 'fp16';
  /** fp32 scaled scores, the fp16 naive-softmax weights, the fp16 weights with softmax in fp32. */
  scaled: Tensor;
  naive: Tensor;
  fp32Softmax: Tensor;
  maxScore: number;
  naiveNonFinite: number;
  fixedNonFinite: number;
}
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
export interface VisionFigure {
  figure: 'vision';
  /** (S, S) grayscale pixels of the task's image. */
  image: Tensor;
  label: number;
  layout: { grid: number; window: number; shift: number; windowsPerSide: number; patchSize: number; cls: boolean };
  /** (nW, H, N, N) attention weights of the layer, per window (N = patches per window, + 1 with CLS). */
  maps: Tensor;
}
export interface CheckFigure {
  figure: 'check';
  stages: { name: string; engine: Tensor; plain: Tensor; maxDiff: number }[];
}

export interface CrossmodalFigure {
  figure: 'crossmodal';
  steps: number;
  /** Training loss of the last chunk; held-out accuracy and pair count from trainer.evaluate. */
  loss: number;
  accuracy: number;
  evalCount: number;
  grid: number;
  patchSize: number;
  /** Held-out matching pairs: the caption's words, the (S, S) image, model.attentionMaps (H, T, N), P(match). */
  pairs: { words: string[]; image: Tensor; maps: Tensor; match: number; index: number }[];
}
export interface LongRangeFigure {
  figure: 'longrange';
  k: number;
  steps: number;
  loss: number;
  accuracy: number;
  tokens: number[];
  /** model.attentionMaps(tokens): (L, H, T, T). */
  maps: Tensor;
}

export interface ForecastFigure {
  figure: 'forecast';
  positional: 'sinusoidal' | 'time';
  steps: number;
  /** Training MSE of the last chunk; held-out MSE and MAE of the model and of the seasonal-naive baseline (trainer.evaluate). */
  loss: number;
  mse: number;
  mae: number;
  baselineMse: number;
  baselineMae: number;
  /** The held-out series: its T context values, then over the horizon the truth, model.forecast and the seasonal-naive baseline. */
  context: number[];
  truth: number[];
  forecast: number[];
  baseline: number[];
}

export interface CheckpointingFigure {
  figure: 'checkpointing';
  rows: { layers: number; full: number; checkpointed: number }[];
  dModel: number;
  seqLen: number;
  batch: number;
}

export type FigureData =
  | CrossmodalFigure | LongRangeFigure | CheckpointingFigure | ForecastFigure
  | ChainFigure | DkFigure | ReshapeFigure | PermutationFigure | PeFigure | RopeFigure | SparseFigure | MasksFigure | Fp16Figure | FlashFigure | VisionFigure | CheckFigure;

export type ChapterRequest =
  | { kind: 'figure'; request: FigureRequest }
  | { kind: 'experiments.list' }
  | { kind: 'experiment.run'; name: string; options: ExperimentOptions };

export type ChapterReply =
  | { kind: 'figure'; data: FigureData }
  | { kind: 'experiments'; list: ExperimentInfo[] }
  | { kind: 'experiment'; result: ExperimentResult };

/** Progress of a running experiment, batched: the worker posts at most every PROGRESS_EVERY_MS. */
export const PROGRESS_EVERY_MS = 100;
/** A trained figure's training progress, posted after each chunk of steps. */
export interface FigureProgress { figure: 'crossmodal' | 'longrange' | 'forecast'; step: number; total: number; loss: number }
export type ChapterEvent = { event: 'experiment.progress'; points: ExperimentProgress[] } | { event: 'figure.progress'; progress: FigureProgress };
