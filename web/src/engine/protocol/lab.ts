// The training lab's messages: the form's settings, what a model the worker holds reports (metrics,
// attention maps, pictures), and the training loop's events. The engine switches (switches.ts) are
// optional fields of the settings.
import type { ModelConfig, StepMetrics as EngineStepMetrics, TaskName as EngineTaskName, Tensor } from '../../../attnlab';
import type { EngineSwitchSettings } from './switches';

/**
 * The engine's tasks the lab offers (k_back needs a k field the lab does not have; caption_match
 * needs captions beside its images). shapes trains a ViT or Swin on images, series a forecaster.
 */
export type TaskName = Exclude<EngineTaskName, 'k_back' | 'caption_match'> | 'text';
/**
 * "Train on text": a decoder language model on the Tang poems (characters), the Brown corpus
 * (byte-level BPE learned from it) or the reader's own UTF-8 file (characters). The corpora's
 * training text is built into the page (web/dist/corpora/, scripts/build_web.sh) and fetched only
 * when chosen.
 */
export type TextCorpus = 'tang' | 'brown' | 'file';

/** The text a 'text' run trains on, as the worker receives it: the engine reads the bytes (Task.fromText). */
export interface TextSource {
  /** 'tang', 'brown' or the reader's file name. */
  name: string;
  tokens: 'char' | 'bpe';
  bytes: Uint8Array;
}
/** The lab's token tasks: the ones with text to type, tokens to decode and token attention maps. */
export type TokenTaskName = Exclude<TaskName, 'shapes' | 'series'>;

/** The lab's form. The engine switches (switches.ts) are optional fields: absent = their default. */
export interface LabSettings extends EngineSwitchSettings {
  task: TaskName;
  /** The text task's corpus (read only when task is 'text'). */
  corpus: TextCorpus;
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

/** The training loop's events; `run` names the model (RunInfo.run). */
export type LabEvent =
  | { event: 'lab.metrics'; run: number; metrics: StepMetrics[]; stepsPerSecond: number }
  | { event: 'lab.maps'; run: number; maps: AttentionMaps; step: number }
  | { event: 'lab.picture'; run: number; picture: LabPicture }
  /** A text model's sample: its continuation of the corpus's prompt at `step` (Model.continueText). */
  | { event: 'lab.sample'; run: number; step: number; prompt: string; text: string }
  | { event: 'lab.stopped'; run: number; reason: 'done' | 'paused' | 'error'; message?: string; step: number };
