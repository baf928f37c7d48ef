// The training lab's engine client: the ONE place that knows the names of the Model / Task /
// Trainer bindings (web/bindings/{model,task,trainer}.cpp, declared in web/attnlab.d.ts). Runs
// inside the engine worker. Tokenising and detokenising go through the engine's task
// (task.encode / task.decode), so the page never re-implements a task's token layout.
import type { AttnLab, Model, ModelOptions, Task, Trainer, TrainerOptions } from '../../../attnlab';
import type { AttentionMaps, ForecastPicture, ImagesPicture, LabPicture, LabSettings, StepMetrics, TaskInfo, TaskName, TextSource, TryResult } from '../protocol/lab';
import { taskLimits, TEXT } from '../protocol/limits';
import { ENGINE_SWITCHES, switchValue, SWITCH_DEFAULTS, type EngineSwitchSettings } from '../protocol/switches';

/** Binding names the lab needs; reported on the page when absent. */
export function missingTrainingBindings(lab: AttnLab): string[] {
  const l = lab as unknown as Record<string, unknown>;
  const missing: string[] = [];
  for (const name of ['Model', 'Task', 'Trainer']) if (typeof l[name] !== 'function') missing.push(name);
  const model = l.Model as { load?: unknown; checkpointNotes?: unknown } | undefined;
  if (typeof l.Model === 'function' && typeof model?.load !== 'function') missing.push('Model.load');
  if (typeof l.Model === 'function' && typeof model?.checkpointNotes !== 'function') missing.push('Model.checkpointNotes');
  return missing;
}

/** The lab's tasks (their names are the engine's, include/attnlab/train/tasks.hpp, and Train on text). */
const LAB_TASKS: readonly TaskName[] = ['copy', 'reverse', 'sort', 'assoc_recall', 'brackets', 'char_lm', 'series', 'shapes', 'text'];

export const isClassification = (task: TaskName) => task === 'brackets' || task === 'shapes';

/** The engine task option each form field sets (limits.json: series reads length as its context, vocab as its horizon). */
function taskOptions(s: LabSettings): Record<string, number> {
  const limits = taskLimits(s.task);
  const name = (field: 'length' | 'vocab') => limits?.options?.[field] ?? field;
  const o: Record<string, number> = { [name('length')]: s.length, seed: s.seed };
  if (limits?.vocab) o[name('vocab')] = s.vocab;
  return o;
}

/**
 * The engine task of the settings: a generated task, or for Train on text the corpus's text read
 * by the engine (Task.fromText: documents at blank lines, every tenth held out, a vocabulary of
 * characters or a byte-level BPE learned from the training documents).
 */
function makeTask(lab: AttnLab, s: LabSettings, text: TextSource | null): Task {
  if (s.task !== 'text') return new lab.Task(s.task, taskOptions(s));
  if (!text) throw new Error('Train on text needs its text: pick a corpus or a file');
  return lab.Task.fromText(text.bytes, { name: text.name, tokens: text.tokens, chars: TEXT.chars, merges: TEXT.merges, length: s.length, seed: s.seed });
}

/** The series and shapes pictures' inputs: a seed apart from the training stream's (the trainer's evaluate uses the same one). */
const HELD_OUT_SEED = 0xe7a1;
/** Images the shapes picture shows. */
const PICTURE_IMAGES = 4;

/** A float32 config value as the form's choice it was stored from (dropout 0.1 reads back as 0.100000001). */
function asChoice(key: keyof EngineSwitchSettings, v: number): number {
  const choices = ENGINE_SWITCHES.find((w) => w.key === key)?.choices;
  const c = Array.isArray(choices) ? choices.find((x) => typeof x === 'number' && Math.abs(x - v) <= 1e-6) : undefined;
  return typeof c === 'number' ? c : v;
}

/**
 * Settings for a checkpoint: its model config (layers, width, heads, positions, ...) and the task
 * it was saved with (Model.save notes, also written by the native CLI), over the current settings.
 */
function settingsForCheckpoint(model: Model, notes: Record<string, string>, current: LabSettings): LabSettings {
  const c = model.config();
  // Every field and switch the form shows comes from the checkpoint's config; a switch an LSTM
  // does not read keeps its default (the engine's config holds the default too).
  const s: LabSettings = {
    ...current,
    architecture: c.architecture === 'crossmodal' ? current.architecture : c.architecture,
    layers: c.numLayers,
    dModel: c.dModel,
    heads: c.numHeads,
    kvHeads: c.numKvHeads || c.numHeads,
    positional: c.positional === 'time' ? current.positional : c.positional,
    norm: c.norm,
    scale: c.scale,
    normalizer: c.normalizer,
    variant: c.variant,
    precision: c.precision,
    window: c.attentionWindow,
    globalTokens: c.globalTokens,
    dropout: asChoice('dropout', c.dropout),
    ffMult: c.architecture === 'lstm' ? SWITCH_DEFAULTS.ffMult : c.ffDim / c.dModel,
    tieQK: c.tieQK,
    checkpointing: c.gradientCheckpointing,
  };
  // A checkpoint without notes still names its kind of task through its config.
  if (c.kind === 'forecaster') Object.assign(s, { task: 'series', vocab: c.horizon });
  else if (c.architecture === 'vit' || c.architecture === 'swin') Object.assign(s, { task: 'shapes', length: c.imageSize, vocab: c.numClasses });
  if (LAB_TASKS.includes(notes.task as TaskName)) s.task = notes.task as TaskName;
  if (notes.length) s.length = Number(notes.length);
  if (notes.vocab) s.vocab = Number(notes.vocab);
  if (notes.seed) s.seed = Number(notes.seed);
  return s;
}

/**
 * The model the settings describe, untrained. An LSTM (embedding -> LSTM layers of width dModel ->
 * head) ignores the heads, K/V heads, positions, norm and scale the form keeps for a Transformer.
 */
function buildModel(lab: AttnLab, s: LabSettings, task: Task): Model {
  const geometry = { vocabSize: task.vocabSize(), seqLen: task.seqLen(), numClasses: task.numClasses(), imageSize: task.imageSize() };
  if (s.task === 'text') return textModel(lab, s, task, geometry);
  if (s.task === 'series') {
    // A forecaster of one feature: the context's values in, the horizon's values out (MSE).
    return new lab.Model({
      kind: 'forecaster',
      architecture: s.architecture,
      numFeatures: 1,
      horizon: geometry.numClasses,
      maxLen: Math.max(32, geometry.seqLen),
      dModel: s.dModel,
      numHeads: s.heads,
      numKvHeads: s.kvHeads,
      numLayers: s.layers,
      positional: s.positional,
      norm: s.norm,
      scale: s.scale,
      seed: s.seed,
      ffDim: 4 * s.dModel,
      ...switchModelOptions(s),
    });
  }
  if (s.task === 'shapes') {
    // Patches of 4 pixels; a ViT classifies from a CLS token with learned positions, a Swin pools
    // its last stage's patches (windows of 2 x 2 patches, shifted on alternate blocks).
    const vit = s.architecture === 'vit';
    return new lab.Model({
      kind: 'encoder',
      architecture: s.architecture,
      imageSize: geometry.imageSize,
      patchSize: 4,
      swinWindow: 2,
      numClasses: geometry.numClasses,
      dModel: s.dModel,
      numHeads: s.heads,
      // 0 = plain multi-head attention (a Swin has no other); fewer K/V heads reach the engine, which names what it refuses.
      numKvHeads: s.kvHeads === s.heads ? 0 : s.kvHeads,
      numLayers: s.layers,
      positional: vit ? 'learned' : 'none',
      pooling: vit ? 'cls' : 'mean',
      norm: s.norm,
      scale: s.scale,
      seed: s.seed,
      ...switchModelOptions(s),
    });
  }
  return new lab.Model({
    ...tokenModelOptions(s, geometry),
    kind: isClassification(s.task) ? 'encoder' : 'decoder',
    ...(isClassification(s.task) ? { numClasses: geometry.numClasses } : {}),
  });
}

/** The form's options of a model that reads tokens: its sizes, positions, norm, seed and switches. */
function tokenModelOptions(s: LabSettings, geometry: { vocabSize: number; seqLen: number }): ModelOptions {
  return {
    architecture: s.architecture,
    vocabSize: geometry.vocabSize,
    maxLen: Math.max(32, geometry.seqLen),
    dModel: s.dModel,
    numHeads: s.heads,
    numKvHeads: s.kvHeads,
    numLayers: s.layers,
    ffDim: 4 * s.dModel,
    positional: s.positional,
    norm: s.norm,
    scale: s.scale,
    seed: s.seed,
    ...switchModelOptions(s),
  };
}

/**
 * A decoder on text with the shipped models' recipe (scripts/train_text_models.sh): rotary
 * positions unless the form picks others, tied input and output embeddings, feed-forward 4 x
 * d_model; it carries the task's tokenizer, so its checkpoint reads and writes text.
 */
function textModel(lab: AttnLab, s: LabSettings, task: Task, geometry: { vocabSize: number; seqLen: number }): Model {
  const model = new lab.Model({ ...tokenModelOptions(s, geometry), kind: 'decoder', architecture: 'transformer', maxLen: geometry.seqLen, tieWeights: true });
  const tokenizer = task.tokenizer();
  try {
    model.setTokenizer(tokenizer);
  } catch (e) {
    model.delete();
    throw e;
  } finally {
    tokenizer?.delete();
  }
  return model;
}

/** The parameter count of the model the settings describe, as the engine sizes it (null for text: its vocabulary comes from the text). */
export function parameterCount(lab: AttnLab, s: LabSettings): number | null {
  if (s.task === 'text') return null;
  const task = makeTask(lab, s, null);
  let model: Model;
  try {
    model = buildModel(lab, s, task);
  } finally {
    task.delete();
  }
  try {
    return model.numParameters();
  } finally {
    model.delete();
  }
}

/** The Model options of the engine switches (a Transformer's; an LSTM takes none of them). */
function switchModelOptions(s: LabSettings): Partial<ModelOptions> {
  if (s.architecture === 'lstm') return {};
  return {
    normalizer: switchValue(s, 'normalizer'),
    variant: switchValue(s, 'variant'),
    precision: switchValue(s, 'precision'),
    attentionWindow: switchValue(s, 'window'),
    globalTokens: switchValue(s, 'globalTokens'),
    dropout: switchValue(s, 'dropout'),
    ffDim: switchValue(s, 'ffMult') * s.dModel,
    tieQK: switchValue(s, 'tieQK'),
    gradientCheckpointing: switchValue(s, 'checkpointing'),
  };
}

/** The Trainer options of the engine switches, over the lab's `base`. */
function switchTrainerOptions(s: LabSettings, base: TrainerOptions): TrainerOptions {
  const loss = switchValue(s, 'lossScale');
  const warmup = switchValue(s, 'warmup');
  return {
    ...base,
    lossScale: loss === 'dynamic' ? 'dynamic' : Number(loss),
    warmupSteps: warmup < 0 ? base.warmupSteps : warmup,
    totalSteps: switchValue(s, 'schedule') === 'constant' ? 0 : base.totalSteps,
  };
}

function trainerOptions(s: LabSettings): TrainerOptions {
  return switchTrainerOptions(s, {
    optimizer: 'adamw',
    lr: s.lr,
    minLr: s.lr / 10,
    batchSize: s.batch,
    warmupSteps: Math.min(100, Math.floor(s.steps / 10)),
    totalSteps: s.steps,
    clipNorm: 1,
    seed: s.seed,
  });
}

export class TrainingSession {
  readonly task: Task;
  trainer: Trainer;
  /** Steps done before the current trainer (earlier runs on this model): its step 1 is offset + 1. */
  private offset = 0;
  /** Steps done on this model so far (training resumes from here). */
  lastStep = 0;

  private constructor(
    public settings: LabSettings,
    private readonly lab: AttnLab,
    readonly model: Model,
    task: Task,
  ) {
    this.task = task;
    this.trainer = new lab.Trainer(model, this.task, trainerOptions(settings));
  }

  /** The step count the current run ends at. */
  get target(): number {
    return this.offset + this.settings.steps;
  }

  /**
   * Trains the same model further with new training settings (steps, learning rate, batch: none
   * changes the model's shape): a new trainer, whose schedule (warm-up, cosine decay over the new
   * steps) starts again from these weights, as when fine-tuning. AdamW's moments start from zero,
   * which the warm-up covers.
   */
  continueWith(settings: LabSettings) {
    const next = new this.lab.Trainer(this.model, this.task, trainerOptions(settings)); // throws before anything changes
    this.trainer.delete();
    this.trainer = next;
    this.offset = this.lastStep;
    this.settings = settings;
  }

  /** What the page needs to check typed input against the task: its tokens' texts and layout. */
  info(): TaskInfo {
    const V = this.task.vocabSize();
    const words = Array.from({ length: V }, (_, t) => this.text([t]));
    const kind = this.task.kind();
    return { kind, words, separated: V > 0 && this.text([0, 0]) === `${words[0]} ${words[0]}`, seqLen: this.task.seqLen() };
  }

  /** A new model for the settings; Train on text reads `text` (the engine refuses bad text, naming why). */
  static create(lab: AttnLab, settings: LabSettings, text: TextSource | null = null): TrainingSession {
    const task = makeTask(lab, settings, text);
    let model: Model;
    try {
      model = buildModel(lab, settings, task);
    } catch (e) {
      task.delete();
      throw e;
    }
    return TrainingSession.withModel(lab, settings, model, task);
  }

  /**
   * A checkpoint from model.save() (or the native CLI). The settings follow the checkpoint: its
   * architecture, and its task when the file names one. Throws the engine's Error (with its
   * message) for a bad file or a task the model does not fit.
   */
  static load(lab: AttnLab, current: LabSettings, bytes: Uint8Array): TrainingSession {
    const notes = lab.Model.checkpointNotes(bytes);
    // A text model needs its corpus to train on: the walkthrough opens it ("Open a model…").
    if (notes.task === 'text') throw new Error(`this checkpoint is a text model (corpus ${notes.corpus ?? 'unnamed'}): open it in the walkthrough`);
    const model = lab.Model.load(bytes);
    let settings: LabSettings, task: Task;
    try {
      settings = settingsForCheckpoint(model, notes, current);
      task = makeTask(lab, settings, null);
    } catch (e) {
      model.delete();
      throw e;
    }
    return TrainingSession.withModel(lab, settings, model, task);
  }

  private static withModel(lab: AttnLab, settings: LabSettings, model: Model, task: Task): TrainingSession {
    try {
      return new TrainingSession(settings, lab, model, task);
    } catch (e) {
      model.delete();
      task.delete();
      throw e;
    }
  }

  step(n: number): StepMetrics {
    const m = this.trainer.step(n);
    this.lastStep = this.offset + m.step;
    return {
      step: this.lastStep,
      loss: m.loss,
      accuracy: m.accuracy,
      gradNorm: m.gradNorm,
      maxScore: m.maxScore,
      ms: m.ms,
      headEntropy: Array.from(m.headEntropy ?? []),
      ...(this.settings.task === 'series' ? { mae: m.mae, baselineMse: m.baselineMse, baselineMae: m.baselineMae } : {}),
    };
  }

  evaluate(batches: number) {
    return this.trainer.evaluate(batches);
  }

  /** A fixed example of the task (its seeded first batch row), without padding; a text task's prompt. */
  sampleTokens(): number[] {
    if (this.task.input() !== 'tokens') return []; // series and shapes show their picture instead
    if (this.settings.task === 'text') return Array.from(this.task.encode(this.task.prompt()));
    const b = this.task.sample(1, this.settings.seed);
    // The lab's tasks (LAB_TASKS) are token tasks; an image task's batch has pixels instead.
    if (!b.tokens) throw new Error(`task ${this.settings.task} has no tokens`);
    const tokens = Array.from(b.tokens.data);
    const pad = b.padding ? Array.from(b.padding.data).indexOf(1) : -1;
    return pad >= 0 ? tokens.slice(0, pad) : tokens;
  }

  /** The task's text of one sequence (a [T] input decodes to one string). */
  text(tokens: Int32Array | number[]): string {
    return this.task.decode(tokens) as string;
  }

  /** A Transformer on tokens has token attention maps; an LSTM has none (its Model refuses attentionMaps), series and shapes draw a picture. */
  get hasAttention(): boolean {
    return this.model.config().architecture !== 'lstm' && this.task.input() === 'tokens';
  }

  /** The forecast of a series model or the images of a shapes model, from the model as it is; null for token tasks. */
  picture(): LabPicture | null {
    if (this.settings.task === 'series') return this.forecastPicture();
    if (this.settings.task === 'shapes') return this.imagesPicture();
    return null;
  }

  /**
   * A Transformer forecaster's attention maps (L, H, T, T) over the held-out window's context (the
   * forecast picture's), labelled by context step; null for an LSTM and for the other tasks.
   */
  seriesMaps(): AttentionMaps | null {
    if (this.settings.task !== 'series' || this.model.config().architecture === 'lstm') return null;
    const b = this.task.sample(1, HELD_OUT_SEED);
    const r = this.model.attentionMaps(b.values!, { time: b.time, batch: 0 });
    const T = b.values!.shape[1];
    const steps = Array.from({ length: T }, (_, i) => i);
    return { shape: [...r.shape], data: new Float32Array(r.data), tokens: steps, labels: steps.map(String) };
  }

  private forecastPicture(): ForecastPicture {
    const b = this.task.sample(1, HELD_OUT_SEED);
    const f = this.model.forecast(b.values!, b.time);
    const F = b.values!.shape[2];
    return {
      kind: 'forecast',
      step: this.lastStep,
      time: Array.from(b.time!.data),
      context: Array.from(b.values!.data.filter((_, i) => i % F === 0)),
      truth: Array.from(b.forecast!.data),
      forecast: Array.from(f.data),
      baseline: Array.from(b.baseline!.data),
    };
  }

  private imagesPicture(): ImagesPicture {
    const b = this.task.sample(PICTURE_IMAGES, HELD_OUT_SEED);
    const pixels = b.pixels!;
    const S = pixels.shape[1];
    const K = this.task.numClasses();
    const p = this.model.predict(pixels);
    const images = Array.from({ length: pixels.shape[0] }, (_, i) => {
      const probs = p.data.subarray(i * K, (i + 1) * K);
      const best = probs.indexOf(Math.max(...probs));
      return { pixels: new Float32Array(pixels.data.subarray(i * S * S, (i + 1) * S * S)), label: this.text([b.labels!.data[i]]), predicted: this.text([best]), probability: probs[best] };
    });
    const layers: ImagesPicture['layers'] = [];
    // The attention layers, counted as the engine counts them (a Swin has numLayers per stage): windowLayout refuses the first one past the end.
    for (let l = 0; ; l++) {
      let layout;
      try {
        layout = this.model.windowLayout(l);
      } catch {
        break;
      }
      const maps = images.map((_, i) => {
        const m = this.model.attentionMaps(pixels, { layer: l, batch: i });
        return { shape: [...m.shape], data: new Float32Array(m.data) };
      });
      layers.push({ layout: { ...layout }, maps });
    }
    return { kind: 'images', step: this.lastStep, size: S, heads: this.model.config().numHeads, images, layers };
  }

  /**
   * A text model's live sample: its continuation of the task's prompt (the opening of the first
   * held-out document), sampled at temperature 0.8 with the run's seed, so the same model writes
   * the same sample; null for the other tasks.
   */
  textSample(): { prompt: string; text: string } | null {
    if (this.settings.task !== 'text') return null;
    const prompt = this.task.prompt();
    const room = this.task.seqLen() - this.task.encode(prompt).length - 1;
    const text = this.model.continueText(prompt, Math.max(1, Math.min(TEXT.sampleTokens, room)), { temperature: 0.8, seed: this.settings.seed });
    return { prompt, text };
  }

  attentionMaps(tokens: number[]): AttentionMaps {
    const r = this.model.attentionMaps(Int32Array.from(tokens));
    return { shape: [...r.shape], data: new Float32Array(r.data), tokens, labels: tokens.map((t) => this.text([t])) };
  }

  /** Decoder: greedy continuation of the prompt. Classifier: class probabilities. Text in, text out. */
  tryModel(text: string, maxNew: number): TryResult {
    if (this.settings.task === 'text') {
      // Text in, text out with the model's tokenizer (a character model reads <bos> first, stops at <eos>).
      const room = this.task.seqLen() - this.task.encode(text).length - 1;
      if (room < 1) throw new Error(`the text has more tokens than the model's context of ${this.task.seqLen()} leaves room for`);
      return { input: text, output: this.model.continueText(text, Math.min(maxNew, room), { temperature: 0 }), probabilities: null };
    }
    const tokens = this.task.encode(text);
    if (!tokens.length) throw new Error('type some input first');
    if (this.model.kind() === 'encoder') {
      const p = this.model.predict(tokens);
      return { input: this.text(tokens), output: null, probabilities: Array.from(p.data) };
    }
    const out = this.model.generate(tokens, maxNew, { temperature: 0, seed: this.settings.seed });
    return { input: this.text(tokens), output: this.text(out.subarray(tokens.length)), probabilities: null };
  }

  /** safetensors bytes; the task and its options travel as notes, so loading restores them. */
  save(): Uint8Array {
    const s = this.settings;
    const notes: Record<string, string | number> = { task: s.task, length: s.length, seed: s.seed };
    if (s.task === 'text') notes.corpus = this.task.name();
    if (taskLimits(s.task)?.vocab) notes.vocab = s.vocab;
    return new Uint8Array(this.model.save(notes));
  }

  dispose() {
    // The trainer shares ownership of model and task: any order is safe.
    for (const o of [this.trainer, this.task, this.model]) o.delete();
  }
}
