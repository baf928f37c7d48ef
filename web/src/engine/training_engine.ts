// The training lab's engine client: the ONE place that knows the names of the Model / Task /
// Trainer bindings (issue 4's contract). If the bindings differ from the contract, only this
// file changes. Runs inside the engine worker.
import type { AttnLabModule, Deletable } from './attnlab_api';
import type { AttentionMaps, LabSettings, StepMetrics, TaskName } from './protocol';

interface EngineModel extends Deletable {
  attentionMaps(tokens: Int32Array): { shape: number[]; data: Float32Array };
  generate(prompt: Int32Array, maxNew: number, options: { temperature: number; seed: number }): Int32Array;
  predict?(tokens: Int32Array): unknown;
  save(): Uint8Array;
}
interface EngineTask extends Deletable {
  vocabSize?(): number;
  seqLen?(): number;
  kind?(): string;
  numClasses?(): number;
  sample?(batch: number, seed: number): { tokens: { shape: number[]; data: Int32Array | Float32Array } };
  decode?(tokens: Int32Array): string;
}
interface EngineTrainer extends Deletable {
  step(n: number): StepMetrics;
  evaluate(batches: number): { loss: number; accuracy: number };
}
type Ctor<T> = new (...args: never[]) => T;

/** Binding names the lab needs; reported on the page when absent. */
export function missingTrainingBindings(lab: AttnLabModule): string[] {
  const l = lab as unknown as Record<string, unknown>;
  const missing: string[] = [];
  for (const name of ['Model', 'Task', 'Trainer']) if (typeof l[name] !== 'function') missing.push(name);
  const model = l.Model as { load?: unknown } | undefined;
  if (typeof l.Model === 'function' && typeof model?.load !== 'function') missing.push('Model.load');
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

/** Vocabulary size and sequence length per tasks.hpp's layout table (when the binding does not say). */
export function taskGeometry(s: LabSettings): { vocabSize: number; seqLen: number } {
  switch (s.task) {
    case 'copy':
    case 'reverse':
    case 'sort':
      return { vocabSize: s.vocab + 1, seqLen: 2 * s.length };
    case 'assoc_recall':
      return { vocabSize: 2 * s.vocab + 1, seqLen: 2 * s.length + 2 };
    case 'brackets':
      return { vocabSize: 2 * s.vocab + 1, seqLen: s.length };
    case 'char_lm':
      return { vocabSize: 96, seqLen: s.length };
  }
}

export class TrainingSession {
  readonly model: EngineModel;
  readonly task: EngineTask;
  trainer: EngineTrainer;
  readonly vocabSize: number;
  readonly seqLen: number;

  private constructor(
    private readonly lab: AttnLabModule,
    readonly settings: LabSettings,
    model: EngineModel | null,
  ) {
    const l = lab as unknown as { Model: Ctor<EngineModel>; Task: Ctor<EngineTask>; Trainer: Ctor<EngineTrainer> };
    const s = settings;
    const taskOptions: Record<string, number> = { length: s.length, seed: s.seed };
    if (s.task !== 'char_lm') taskOptions.vocab = s.vocab;
    this.task = new (l.Task as unknown as new (n: string, o: object) => EngineTask)(ENGINE_TASK[s.task], taskOptions);
    const geo = taskGeometry(s);
    this.vocabSize = this.task.vocabSize?.() ?? geo.vocabSize;
    this.seqLen = this.task.seqLen?.() ?? geo.seqLen;
    this.model =
      model ??
      new (l.Model as unknown as new (o: object) => EngineModel)({
        kind: isClassification(s.task) ? 'encoder' : 'decoder',
        vocabSize: this.vocabSize,
        maxLen: Math.max(32, this.seqLen),
        dModel: s.dModel,
        numHeads: s.heads,
        numKvHeads: s.kvHeads,
        numLayers: s.layers,
        ffDim: 4 * s.dModel,
        positional: s.positional,
        norm: s.norm,
        scale: s.scale,
        seed: s.seed,
        ...(isClassification(s.task) ? { numClasses: this.task.numClasses?.() ?? 2 } : {}),
      });
    this.trainer = new (l.Trainer as unknown as new (m: EngineModel, t: EngineTask, o: object) => EngineTrainer)(
      this.model,
      this.task,
      { optimizer: 'adamw', lr: s.lr, batchSize: s.batch, warmupSteps: Math.min(100, Math.floor(s.steps / 10)), clipNorm: 1, seed: s.seed },
    );
  }

  static create(lab: AttnLabModule, settings: LabSettings): TrainingSession {
    return new TrainingSession(lab, settings, null);
  }

  /** A checkpoint from model.save(); throws the engine's Error (with its message) for a bad file. */
  static load(lab: AttnLabModule, settings: LabSettings, bytes: Uint8Array): TrainingSession {
    const Model = (lab as unknown as { Model: { load(b: Uint8Array): EngineModel } }).Model;
    const model = Model.load(bytes);
    return new TrainingSession(lab, settings, model);
  }

  /** The trainer's step count after the last call (training resumes from here). */
  lastStep = 0;

  step(n: number): StepMetrics {
    const m = this.trainer.step(n);
    this.lastStep = m.step;
    return { step: m.step, loss: m.loss, accuracy: m.accuracy, gradNorm: m.gradNorm, maxScore: m.maxScore, ms: m.ms };
  }

  evaluate(batches: number) {
    return this.trainer.evaluate(batches);
  }

  attentionMaps(tokens: number[]): AttentionMaps {
    const r = this.model.attentionMaps(Int32Array.from(tokens));
    return { shape: [...r.shape], data: new Float32Array(r.data), tokens };
  }

  /** Decoder: greedy continuation of the prompt. Classifier: the engine's prediction. */
  tryModel(tokens: number[], maxNew: number): number[] {
    if (isClassification(this.settings.task)) {
      if (!this.model.predict) throw new Error('Model.predict is not bound in this build');
      const p = this.model.predict(Int32Array.from(tokens)) as number | { label: number } | ArrayLike<number>;
      if (typeof p === 'number') return [p];
      if (p && typeof (p as { label?: number }).label === 'number') return [(p as { label: number }).label];
      return Array.from(p as ArrayLike<number>);
    }
    return Array.from(this.model.generate(Int32Array.from(tokens), maxNew, { temperature: 0, seed: this.settings.seed }));
  }

  save(): Uint8Array {
    return new Uint8Array(this.model.save());
  }

  dispose() {
    for (const o of [this.trainer, this.task, this.model]) {
      try {
        o.delete();
      } catch {
        /* already deleted */
      }
    }
  }

  get labModule() {
    return this.lab;
  }
}
