// The training lab's engine client: the ONE place that knows the names of the Model / Task /
// Trainer bindings (web/bindings/{model,task,trainer}.cpp, declared in web/attnlab.d.ts). Runs
// inside the engine worker. Tokenising and detokenising go through the engine's task
// (task.encode / task.decode), so the page never re-implements a task's token layout.
import type { AttnLab, Model, Task, Trainer, TrainerOptions } from '../../attnlab';
import type { AttentionMaps, LabSettings, StepMetrics, TaskInfo, TaskName, TryResult } from './protocol';
import { switchModelOptions, switchTrainerOptions } from './switches';

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

/** The lab's tasks (their names are the engine's, include/attnlab/train/tasks.hpp). */
const LAB_TASKS: readonly TaskName[] = ['copy', 'reverse', 'sort', 'assoc_recall', 'brackets', 'char_lm'];

export const isClassification = (task: TaskName) => task === 'brackets';

function taskOptions(s: LabSettings): Record<string, number> {
  const o: Record<string, number> = { length: s.length, seed: s.seed };
  if (s.task !== 'char_lm') o.vocab = s.vocab;
  return o;
}

/**
 * Settings for a checkpoint: its model config (layers, width, heads, positions, ...) and the task
 * it was saved with (Model.save notes, also written by the native CLI), over the current settings.
 */
function settingsForCheckpoint(model: Model, notes: Record<string, string>, current: LabSettings): LabSettings {
  const c = model.config();
  const s: LabSettings = { ...current, architecture: c.architecture, layers: c.numLayers, dModel: c.dModel, heads: c.numHeads, kvHeads: c.numKvHeads || c.numHeads, positional: c.positional, norm: c.norm, scale: c.scale };
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
function buildModel(lab: AttnLab, s: LabSettings): Model {
  const task = new lab.Task(s.task, taskOptions(s));
  const geometry = { vocabSize: task.vocabSize(), seqLen: task.seqLen(), numClasses: task.numClasses() };
  task.delete();
  return new lab.Model({
    kind: isClassification(s.task) ? 'encoder' : 'decoder',
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
    ...(isClassification(s.task) ? { numClasses: geometry.numClasses } : {}),
    ...switchModelOptions(s),
  });
}

/** The parameter count of the model the settings describe, as the engine sizes it. */
export function parameterCount(lab: AttnLab, s: LabSettings): number {
  const model = buildModel(lab, s);
  try {
    return model.numParameters();
  } finally {
    model.delete();
  }
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
  ) {
    this.task = new lab.Task(settings.task, taskOptions(settings));
    try {
      this.trainer = new lab.Trainer(model, this.task, trainerOptions(settings));
    } catch (e) {
      this.task.delete();
      throw e;
    }
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
    // The lab's tasks are token tasks (protocol.ts TaskName leaves series out).
    if (kind === 'regression') throw new Error(`lab: task '${this.task.name()}' forecasts values; the lab trains token tasks`);
    return { kind, words, separated: V > 0 && this.text([0, 0]) === `${words[0]} ${words[0]}`, seqLen: this.task.seqLen() };
  }

  static create(lab: AttnLab, settings: LabSettings): TrainingSession {
    return TrainingSession.withModel(lab, settings, buildModel(lab, settings));
  }

  /**
   * A checkpoint from model.save() (or the native CLI). The settings follow the checkpoint: its
   * architecture, and its task when the file names one. Throws the engine's Error (with its
   * message) for a bad file or a task the model does not fit.
   */
  static load(lab: AttnLab, current: LabSettings, bytes: Uint8Array): TrainingSession {
    const model = lab.Model.load(bytes);
    const settings = settingsForCheckpoint(model, lab.Model.checkpointNotes(bytes), current);
    return TrainingSession.withModel(lab, settings, model);
  }

  private static withModel(lab: AttnLab, settings: LabSettings, model: Model): TrainingSession {
    try {
      return new TrainingSession(settings, lab, model);
    } catch (e) {
      model.delete();
      throw e;
    }
  }

  step(n: number): StepMetrics {
    const m = this.trainer.step(n);
    this.lastStep = this.offset + m.step;
    return { step: this.lastStep, loss: m.loss, accuracy: m.accuracy, gradNorm: m.gradNorm, maxScore: m.maxScore, ms: m.ms, headEntropy: Array.from(m.headEntropy ?? []) };
  }

  evaluate(batches: number) {
    return this.trainer.evaluate(batches);
  }

  /** A fixed example of the task (its seeded first batch row), without padding. */
  sampleTokens(): number[] {
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

  /** A Transformer has attention maps; an LSTM has none (its Model refuses attentionMaps). */
  get hasAttention(): boolean {
    return this.model.config().architecture !== 'lstm';
  }

  attentionMaps(tokens: number[]): AttentionMaps {
    const r = this.model.attentionMaps(Int32Array.from(tokens));
    return { shape: [...r.shape], data: new Float32Array(r.data), tokens, labels: tokens.map((t) => this.text([t])) };
  }

  /** Decoder: greedy continuation of the prompt. Classifier: class probabilities. Text in, text out. */
  tryModel(text: string, maxNew: number): TryResult {
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
    if (s.task !== 'char_lm') notes.vocab = s.vocab;
    return new Uint8Array(this.model.save(notes));
  }

  dispose() {
    // The trainer shares ownership of model and task: any order is safe.
    for (const o of [this.trainer, this.task, this.model]) o.delete();
  }
}
