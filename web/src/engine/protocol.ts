// The typed messages between the page (engine/client.ts) and the engine worker (engine/worker.ts).
// Everything that crosses is plain data: tensors as { shape, data: Float32Array } with the
// Float32Arrays transferred, never views into WASM memory. Engine types come from the module's
// own declarations (web/attnlab.d.ts); this file declares only what the page adds to them.
import type { AttentionGradients, Flavour, KvCacheStep, StageNumerics, ModelConfig, StepMetrics as EngineStepMetrics, TaskName as EngineTaskName, Tensor } from '../../attnlab';
import type { ChapterEvent, ChapterReply, ChapterRequest } from './chapter_protocol';

export type { Tensor };
import type { EngineSwitchSettings } from './switches';

export type Positional = 'none' | 'sinusoidal' | 'rope';
export type MaskKind = 'none' | 'causal' | 'padding' | 'causal+padding' | 'causal+window' | 'causal+window+global';

export interface EngineInfo {
  flavour: Exclude<Flavour, 'scalar'>;
  threads: number;
  simd: boolean;
  version: string;
  /** Why this flavour: cross-origin isolation decides whether SharedArrayBuffer exists. */
  crossOriginIsolated: boolean;
  /** True when the build has the Model / Task / Trainer bindings. */
  training: boolean;
  /** What is missing when training is false (names of the absent bindings). */
  trainingMissing: string[];
}

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
  normalizer?: 'softmax' | 'sigmoid' | 'relu';
  /** The emulated number format; absent = fp32. */
  precision?: 'fp32' | 'fp16' | 'bf16';
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

/** Where a walkthrough trace came from when it is a layer of the lab's model (null for random weights). */
export interface ModelTraceInfo {
  kind: 'encoder' | 'decoder';
  task: TaskName;
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
  normalizerWeights?: Record<'softmax' | 'sigmoid' | 'relu', StageData>;
}

// ---- training (issue 4's Model / Task / Trainer contract) ----

/**
 * The engine's tasks the lab offers (k_back needs a k field the lab does not have; caption_match
 * needs captions beside its images). shapes trains a ViT or Swin on images, series a forecaster.
 */
export type TaskName = Exclude<EngineTaskName, 'k_back' | 'caption_match'>;
/** The lab's token tasks: the ones with text to type, tokens to decode and token attention maps. */
export type TokenTaskName = Exclude<TaskName, 'shapes' | 'series'>;

/** The lab's form. The engine switches (switches.ts) are optional fields: absent = their default. */
export interface LabSettings extends EngineSwitchSettings {
  task: TaskName;
  /** Transformer blocks or LSTM layers between the embedding and the head (ModelConfig.architecture). */
  architecture: ModelConfig['architecture'];
  length: number;
  vocab: number;
  layers: number;
  dModel: number;
  heads: number;
  kvHeads: number;
  positional: ModelConfig['positional'];
  norm: ModelConfig['norm'];
  scale: boolean;
  lr: number;
  batch: number;
  steps: number;
  seed: number;
}

/** The per-step numbers the lab plots (the engine's StepMetrics without its arrays). */
export type StepMetrics = Pick<EngineStepMetrics, 'step' | 'loss' | 'accuracy' | 'gradNorm' | 'maxScore' | 'ms'> & {
  /** The series task: the step batch's MAE and the seasonal-naive baseline's MSE and MAE (absent or NaN otherwise). */
  mae?: number;
  baselineMse?: number;
  baselineMae?: number;
  /** (L·H) mean attention entropy per head, layer-major (nats), as a plain array; empty for an LSTM. */
  headEntropy?: number[];
};

export interface AttentionMaps {
  /** [layers, heads, T, T] */
  shape: number[];
  data: Float32Array;
  tokens: number[];
  /** Each token as the engine's task writes it (task.decode). */
  labels: string[];
}

/** Trying the model on the reader's text (tokenised by the engine's task). */
export interface TryResult {
  /** The input as the task reads it back (task.decode(task.encode(text))). */
  input: string;
  /** Decoder: the generated continuation; null for a classifier. */
  output: string | null;
  /** Classifier: probability of each class; null for a decoder. */
  probabilities: number[] | null;
}

/** The engine task's tokens, for checking typed input on the page (decode of each token id). */
export interface TaskInfo {
  kind: 'sequence' | 'classification' | 'regression';
  /** (V) the text of each token id; specials included (e.g. '|' for the separator). */
  words: string[];
  /** Tokens are written apart ("3 1 |") rather than side by side ("(()", characters). */
  separated: boolean;
  seqLen: number;
}

/**
 * The series task's picture: one held-out window (the task's sample from HELD_OUT_SEED), the
 * context's values, then over the horizon the truth, the model's forecast (Model.forecast) and
 * the seasonal-naive baseline (batch.baseline), all the engine's numbers.
 */
export interface ForecastPicture {
  kind: 'forecast';
  /** The model's step count when the forecast was made. */
  step: number;
  /** (T + horizon) timestamps: the context's, then the forecast steps'. */
  time: number[];
  /** (T) feature 0 of the context. */
  context: number[];
  /** (horizon) each. */
  truth: number[];
  forecast: number[];
  baseline: number[];
}

/** Where an image model's attention layer places its windows on the patch grid (Model.windowLayout). */
export interface WindowLayout {
  grid: number;
  window: number;
  shift: number;
  windowsPerSide: number;
  patchSize: number;
  cls: boolean;
}

/** The shapes task's picture: a few held-out images, the model's guesses and every attention layer's weights per image. */
export interface ImagesPicture {
  kind: 'images';
  step: number;
  /** S of the (S, S) images. */
  size: number;
  heads: number;
  images: {
    /** (S, S) row-major pixels. */
    pixels: Float32Array;
    label: string;
    /** The model's most probable class (Model.predict) and its probability. */
    predicted: string;
    probability: number;
  }[];
  /** Per attention layer: its window layout and, per image, the weights (nW, H, M², M²) of Model.attentionMaps(image, {layer}). */
  layers: { layout: WindowLayout; maps: Tensor[] }[];
}

export type LabPicture = ForecastPicture | ImagesPicture;

/** A model the worker holds, as the page knows it: `run` tags the events of its training. */
export interface RunInfo {
  run: number;
  task: TaskInfo;
  /** Steps the model has been trained so far. */
  steps: number;
  /** The model's parameter count (Model.numParameters). */
  parameters: number;
  /** The forecast or images of a series or shapes model (null for token tasks). */
  picture?: LabPicture | null;
}

export type Request =
  | { kind: 'init'; loaderUrl: string; lock: string }
  | { kind: 'trace'; request: TraceRequest }
  /** sample: the input whose attention maps are shown; empty = the task's own seeded example. */
  | { kind: 'lab.create'; settings: LabSettings; sample: number[] }
  /** Further training of the current model with new training settings (same model shape and task). */
  | { kind: 'lab.continue'; settings: LabSettings }
  | { kind: 'lab.run'; chunk: number; refreshEvery: number }
  | { kind: 'lab.pause' }
  | { kind: 'lab.evaluate'; batches: number }
  | { kind: 'lab.maps'; tokens: number[] }
  | { kind: 'lab.try'; text: string; maxNew: number }
  /** One layer of the lab's model on `text` (task syntax; empty = the lab's example input), for the walkthrough. */
  | { kind: 'lab.trace'; text: string; layer: number }
  | { kind: 'lab.save' }
  /** The parameter count of the model these settings describe (built by the engine, then deleted). */
  | { kind: 'lab.count'; settings: LabSettings }
  | { kind: 'lab.load'; bytes: Uint8Array; settings: LabSettings }
  | { kind: 'lab.dispose' }
  /**
   * For tests only (tests/browser/engine_recovery.test.mjs): the engine executes a real WebAssembly
   * trap (the module's test-only _trapForTests binding), so the page's handling of a trap can be
   * tested. The page never sends it.
   */
  | { kind: 'test.trap' }
  /** The chapters' figures and experiments (engine/chapter_protocol.ts). */
  | ChapterRequest;

export type Reply =
  | { kind: 'init'; info: EngineInfo }
  | { kind: 'trace'; result: TraceResult }
  | { kind: 'ok' }
  | { kind: 'created'; info: RunInfo }
  | { kind: 'evaluate'; loss: number; accuracy: number }
  | { kind: 'maps'; maps: AttentionMaps }
  | { kind: 'try'; result: TryResult }
  /** A checkpoint was loaded; settings follow its architecture and the task it names. */
  | { kind: 'loaded'; info: RunInfo; settings: LabSettings; maps: AttentionMaps | null }
  | { kind: 'save'; bytes: Uint8Array }
  | { kind: 'count'; parameters: number }
  | ChapterReply;

/** Unsolicited messages of the worker: training events and its own life. */
/** How often a starting worker says it is still working (see 'engine.starting'). */
export const START_BEAT_MS = 500;

export type WorkerEvent =
  | LabEvent
  | ChapterEvent
  /** The worker holds the Web Lock `lock` until it ends (the page learns of its end from it). */
  | { event: 'engine.alive'; lock: string }
  /** Sent every START_BEAT_MS while the worker loads the engine: the page restarts a worker that falls silent. */
  | { event: 'engine.starting' }
  /** The module trapped or ran out of memory: it cannot be used again, and the worker closes. */
  | { event: 'engine.fatal'; message: string };

/** The training loop's events; `run` names the model (RunInfo.run). */
export type LabEvent =
  | { event: 'lab.metrics'; run: number; metrics: StepMetrics[]; stepsPerSecond: number }
  | { event: 'lab.maps'; run: number; maps: AttentionMaps; step: number }
  | { event: 'lab.picture'; run: number; picture: LabPicture }
  | { event: 'lab.stopped'; run: number; reason: 'done' | 'paused' | 'error'; message?: string; step: number };

export interface RequestEnvelope {
  id: number;
  body: Request;
}
export type ReplyEnvelope =
  | { id: number; ok: true; body: Reply }
  | { id: number; ok: false; error: string };
