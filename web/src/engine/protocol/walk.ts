// The walkthrough's messages: one attention call traced by the engine worker (worker/walk_trace.ts),
// with its stages, parameters, gradients, KV-cache steps and variants as plain data.
import type { AttentionGradients, KvCacheStep, ModelKind, Normalizer, PositionalKind, Precision, StageNumerics, Tensor } from '../../../attnlab';
import type { TaskName } from './lab';
import type { PretrainedToken } from './pretrained';

/** The walkthrough's positions: the layer's own (none, sinusoidal, rope: walkthrough/inputs.ts POSITIONALS). */
export type Positional = PositionalKind;
export type MaskKind = 'none' | 'causal' | 'padding' | 'causal+padding' | 'causal+window' | 'causal+window+global';

/** One attention call of the walkthrough: random (seeded) weights, one sentence. */
export interface TraceRequest {
  /** (T, C) token embeddings, before any positional encoding. */
  x: Tensor;
  dModel: number;
  numHeads: number;
  numKvHeads: number;
  seed: number;
  positional: Positional;
  causal: boolean;
  /** (T) 1 = padded key, or null. */
  keyPaddingMask: Uint8Array | null;
  scale: boolean;
  /** W: sliding window (Longformer), hide keys more than W positions away; 0 or absent = none. */
  window?: number;
  /** G: with a window, the first G positions see and are seen by every token; 0 or absent = none. */
  globalTokens?: number;
  /** Cross-attention: (S, C) the context's embeddings, which K and V are projected from; null or absent = self-attention. */
  memory?: Tensor | null;
  /** The weights' normaliser; absent = softmax. */
  normalizer?: Normalizer;
  /** The emulated number format; absent = fp32. */
  precision?: Precision;
}

/** The backward steps' loss: pull output row `lossRow` towards `target` (the embedding of token `targetToken`). */
export interface BackwardResult extends Omit<AttentionGradients, 'grads'> {
  targetToken: number;
  target: Tensor;
  grads: Record<string, Tensor>;
}

/** A stage as recorded by the engine: one tensor per head (or a single entry for whole-width stages). */
/** One recorded matrix of a stage, with the cells rounding to fp16/bf16 flushed to ±0 (Trace.flushedCells; absent when none). */
export interface StageTensor extends Tensor {
  /** Flat indices row · cols + col, ascending. */
  flushed?: Int32Array;
  /** Weights stages only: each row's sum and entropy in nats, from the engine (lab.rowStats). */
  rowSum?: Float32Array;
  rowEntropy?: Float32Array;
}

export interface StageData {
  name: string;
  perHead: boolean;
  heads: StageTensor[];
}

/** Where a walkthrough trace came from when it is a layer of a model (null for random weights). */
export interface ModelTraceInfo {
  kind: Exclude<ModelKind, 'forecaster'>;
  /** The lab's task, or null for a checkpoint the reader opened (then `pretrained` is set). */
  task: TaskName | null;
  /**
   * An opened checkpoint (pretrained.ts): its file name, the sentence and how its tokenizer cut it,
   * and the text of the tokens it generated after it (the KV-cache step's), '' when none.
   */
  pretrained?: { name: string; text: string; spans: PretrainedToken[]; continuation: string } | null;
  /** The block the stages were recorded in, of `layers`. */
  layer: number;
  layers: number;
  /** The input as token ids, its text in the task's syntax, and each token as the task decodes it. */
  tokens: number[];
  text: string;
  labels: string[];
}

export interface TraceResult {
  request: TraceRequest;
  /** Set when the stages are one layer of the lab's model (Model.trace), else absent/null. */
  model?: ModelTraceInfo | null;
  /** Stage names in the engine's canonical order, as the engine listed them. */
  stageNames: string[];
  stages: Record<string, StageData>;
  /** q_proj.weight, q_proj.bias, ... as the engine holds them. */
  parameters: Record<string, Tensor>;
  /** The same call with scale: false (for the scaling step's "before" picture). */
  unscaled: { scaled: StageData; weights: StageData };
  /** The positional table the engine adds (stage x of a trace with x = 0), or null. */
  positionTable: Tensor | null;
  /** The factor that turned scores into scaled: 1/sqrt(d_k) with scaling on, else 1. */
  scaleFactor: number;
  /** Wall time of the engine calls in the worker. */
  elapsedMs: number;
  /** The walkthrough's backward steps: the engine's gradients under ½‖y_r − target‖² (lab.attentionGradients); absent for a lab model's layer. */
  backward?: BackwardResult | null;
  /** The engine's numerics of each recorded stage (Trace.numerics: max |value|, ±∞, NaN, flushed counts). */
  numerics?: Partial<Record<string, StageNumerics>>;
  /** Generation token by token through a KV cache (softmax) and through linear attention's state (lab.kvCacheSteps); self-attention only. */
  kvCache?: {
    full: KvCacheStep[];
    linear: KvCacheStep[];
    /**
     * A lab-trained decoder's generation (absent for random weights, whose steps run over the trace's
     * own rows): every token fed, the prompt's then the model's own (greedy), labelled; the first
     * `prompt` of them are the prompt; `k` holds the cached keys (after RoPE, if any) per K/V head.
     */
    generation?: { tokens: number[]; labels: string[]; prompt: number; k: Tensor[] };
  } | null;
  /**
   * The same layer as other attention variants: linear attention's φ(q), φ(k) and implied weights,
   * and block-sparse attention's layout (blocks of `blockSize`, 1 = live) with its masked scores and
   * weights; null where the engine refuses the variant for these settings.
   */
  variants?: {
    linear: { phiQ: StageData; phiK: StageData; weights: StageData } | null;
    blockSparse: { blockSize: number; layout: { shape: number[]; data: Uint8Array }; masked: StageData; weights: StageData } | null;
  };
  /** The weights of the same layer under each normaliser, per head (the softmax step's side-by-side). */
  normalizerWeights?: Record<Normalizer, StageData>;
}
