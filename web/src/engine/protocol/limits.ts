// The lab form's limits (limits.json), read by the page's form and by the worker that builds the
// task: what each number means for a task, its range and the value the task starts with. Each
// range lies inside the engine's; tests/wasm/lab_limits.test.mjs checks every bound against it.
import type { LabSettings, TaskName } from './lab';
import LIMITS from './limits.json';

/** A numeric field's meaning for a task and the values the form accepts. */
export interface Range {
  label: string;
  min: number;
  max: number;
  default?: number;
}

export interface TaskLimits {
  /** Prompt length / pairs / max length / window. */
  length: Range;
  /** Symbols / keys / bracket kinds; null where the task has none (char_lm: the corpus fixes it). */
  vocab: Range | null;
  /** Steps the default model needs to learn the task with the defaults above. */
  steps: number;
  /** The engine's task option a form field sets where it is not length or vocab (series: context and horizon). */
  options?: Record<string, string>;
}

/** Train on text's limits: its context, vocabulary sizes and live sample (limits.json "text"). */
export interface TextLimits extends TaskLimits {
  /** Characters a char vocabulary keeps (besides <unk>, <bos>, <eos>). */
  chars: number;
  /** BPE merges learned from the text. */
  merges: number;
  /** Steps between two samples of generated text. */
  sampleEvery: number;
  /** Tokens a sample generates at most. */
  sampleTokens: number;
}
export const TEXT: TextLimits = LIMITS.text;

export const taskLimits = (task: TaskName): TaskLimits => (task === 'text' ? TEXT : (LIMITS.tasks as Record<Exclude<TaskName, 'text'>, TaskLimits>)[task]);

/** The training fields' ranges. */
export const TRAINING: Record<'lr' | 'steps' | 'seed', Range> = LIMITS.training;

/** The form's other fields: the model a task's own length, vocab and steps learn with. */
export const LAB_DEFAULTS = { ...LIMITS.defaults, corpus: 'tang' } as Omit<LabSettings, 'task' | 'length' | 'vocab' | 'steps'>;
