// The training lab's engine client: the ONE place that knows the names of the Model / Task /
// Trainer bindings (web/bindings/{model,task,trainer}.cpp, declared in web/attnlab.d.ts). Runs
// inside the engine worker. Tokenising and detokenising go through the engine's task
// (task.encode / task.decode), so the page never re-implements a task's token layout.
import type { AttnLabModule, Deletable } from './attnlab_api';
import type { AttentionMaps, LabSettings, StepMetrics, TaskName, TryResult } from './protocol';

interface IndexTensor {
  shape: number[];
  data: Int32Array;
}
interface FloatTensor {
  shape: number[];
  data: Float32Array;
}
interface EngineModel extends Deletable {
  kind(): 'encoder' | 'decoder';
  config(): Record<string, unknown>;
  attentionMaps(tokens: Int32Array): FloatTensor;
  trace(tokens: Int32Array, options: { layer: number }): EngineTrace;
  parameterNames(): string[];
  getParameter(name: string): FloatTensor;
  generate(prompt: Int32Array, maxNew: number, options: { temperature: number; seed: number }): Int32Array;
  predict(tokens: Int32Array): FloatTensor;
  save(notes?: Record<string, string | number>): Uint8Array;
}
/** The Trace binding (web/bindings/trace.hpp), as Model.trace returns it. */
export interface EngineTrace extends Deletable {
  stageNames(): string[];
  stage(name: string, head?: number): FloatTensor;
  numHeads(name: string): number;
}
interface EngineTask extends Deletable {
  vocabSize(): number;
  seqLen(): number;
  numClasses(): number;
  kind(): 'sequence' | 'classification';
  sample(batch: number, seed: number): { tokens: IndexTensor; padding: { shape: number[]; data: Uint8Array } | null };
  decode(tokens: Int32Array | number[]): string;
  encode(text: string): Int32Array;
}
interface EngineStep {
  step: number;
  loss: number;
  accuracy: number;
  gradNorm: number;
  maxScore: number;
  ms: number;
}
interface EngineTrainer extends Deletable {
  step(n: number): EngineStep;
  evaluate(batches: number): { loss: number; accuracy: number; count: number };
}
interface Bindings {
  Model: (new (options: object) => EngineModel) & {
    load(bytes: Uint8Array): EngineModel;
    checkpointNotes(bytes: Uint8Array): Record<string, string>;
  };
  Task: new (name: string, options: object) => EngineTask;
  Trainer: new (model: EngineModel, task: EngineTask, options: object) => EngineTrainer;
}

/** Binding names the lab needs; reported on the page when absent. */
export function missingTrainingBindings(lab: AttnLabModule): string[] {
  const l = lab as unknown as Record<string, unknown>;
  const missing: string[] = [];
  for (const name of ['Model', 'Task', 'Trainer']) if (typeof l[name] !== 'function') missing.push(name);
  const model = l.Model as { load?: unknown; checkpointNotes?: unknown } | undefined;
  if (typeof l.Model === 'function' && typeof model?.load !== 'function') missing.push('Model.load');
  if (typeof l.Model === 'function' && typeof model?.checkpointNotes !== 'function') missing.push('Model.checkpointNotes');
  return missing;
}

/** Engine task names per lab task (the C++ names from include/attnlab/train/tasks.hpp). */
const ENGINE_TASK: Record<TaskName, string> = {
  copy: 'copy',
  reverse: 'reverse',
  sort: 'sort',
  assoc_recall: 'assoc_recall',
  brackets: 'brackets',
  char_lm: 'char_lm',
};

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
function settingsForCheckpoint(model: EngineModel, notes: Record<string, string>, current: LabSettings): LabSettings {
  const c = model.config() as { numLayers: number; dModel: number; numHeads: number; numKvHeads: number; positional: LabSettings['positional']; norm: LabSettings['norm']; scale: boolean };
  const s: LabSettings = { ...current, layers: c.numLayers, dModel: c.dModel, heads: c.numHeads, kvHeads: c.numKvHeads || c.numHeads, positional: c.positional, norm: c.norm, scale: c.scale };
  if (notes.task && notes.task in ENGINE_TASK) s.task = notes.task as TaskName;
  if (notes.length) s.length = Number(notes.length);
  if (notes.vocab) s.vocab = Number(notes.vocab);
  if (notes.seed) s.seed = Number(notes.seed);
  return s;
}

export class TrainingSession {
  readonly task: EngineTask;
  readonly trainer: EngineTrainer;
  /** The trainer's step count after the last call (training resumes from here). */
  lastStep = 0;

  private constructor(
    readonly settings: LabSettings,
    bindings: Bindings,
    readonly model: EngineModel,
  ) {
    const s = settings;
    this.task = new bindings.Task(ENGINE_TASK[s.task], taskOptions(s));
    try {
      this.trainer = new bindings.Trainer(model, this.task, {
        optimizer: 'adamw',
        lr: s.lr,
        minLr: s.lr / 10,
        batchSize: s.batch,
        warmupSteps: Math.min(100, Math.floor(s.steps / 10)),
        totalSteps: s.steps,
        clipNorm: 1,
        seed: s.seed,
      });
    } catch (e) {
      this.task.delete();
      throw e;
    }
  }

  static create(lab: AttnLabModule, settings: LabSettings): TrainingSession {
    const b = lab as unknown as Bindings;
    const s = settings;
    const task = new b.Task(ENGINE_TASK[s.task], taskOptions(s));
    const geometry = { vocabSize: task.vocabSize(), seqLen: task.seqLen(), numClasses: task.numClasses() };
    task.delete();
    const model = new b.Model({
      kind: isClassification(s.task) ? 'encoder' : 'decoder',
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
    });
    return TrainingSession.withModel(b, settings, model);
  }

  /**
   * A checkpoint from model.save() (or the native CLI). The settings follow the checkpoint: its
   * architecture, and its task when the file names one. Throws the engine's Error (with its
   * message) for a bad file or a task the model does not fit.
   */
  static load(lab: AttnLabModule, current: LabSettings, bytes: Uint8Array): TrainingSession {
    const b = lab as unknown as Bindings;
    const model = b.Model.load(bytes);
    const settings = settingsForCheckpoint(model, b.Model.checkpointNotes(bytes), current);
    return TrainingSession.withModel(b, settings, model);
  }

  private static withModel(b: Bindings, settings: LabSettings, model: EngineModel): TrainingSession {
    try {
      return new TrainingSession(settings, b, model);
    } catch (e) {
      model.delete();
      throw e;
    }
  }

  step(n: number): StepMetrics {
    const m = this.trainer.step(n);
    this.lastStep = m.step;
    return { step: m.step, loss: m.loss, accuracy: m.accuracy, gradNorm: m.gradNorm, maxScore: m.maxScore, ms: m.ms };
  }

  evaluate(batches: number) {
    return this.trainer.evaluate(batches);
  }

  /** A fixed example of the task (its seeded first batch row), without padding. */
  sampleTokens(): number[] {
    const b = this.task.sample(1, this.settings.seed);
    const tokens = Array.from(b.tokens.data);
    const pad = b.padding ? Array.from(b.padding.data).indexOf(1) : -1;
    return pad >= 0 ? tokens.slice(0, pad) : tokens;
  }

  attentionMaps(tokens: number[]): AttentionMaps {
    const r = this.model.attentionMaps(Int32Array.from(tokens));
    return { shape: [...r.shape], data: new Float32Array(r.data), tokens, labels: tokens.map((t) => this.task.decode([t])) };
  }

  /** Decoder: greedy continuation of the prompt. Classifier: class probabilities. Text in, text out. */
  tryModel(text: string, maxNew: number): TryResult {
    const tokens = this.task.encode(text);
    if (!tokens.length) throw new Error('type some input first');
    if (this.model.kind() === 'encoder') {
      const p = this.model.predict(tokens);
      return { input: this.task.decode(tokens), output: null, probabilities: Array.from(p.data) };
    }
    const out = this.model.generate(tokens, maxNew, { temperature: 0, seed: this.settings.seed });
    return { input: this.task.decode(tokens), output: this.task.decode(out.subarray(tokens.length)), probabilities: null };
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
