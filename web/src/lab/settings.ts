// Lab settings: per-task fields and ranges (limits.json, checked against the engine by
// tests/wasm/lab_limits.test.mjs), validation in the form's words, and the URL query string (so a
// link reproduces a run). Token layouts live in the engine (task.encode / task.decode).
import type { LabSettings, TaskName } from '../engine/protocol';
import LIMITS from './limits.json';

export const TASKS: { id: TaskName; label: string; what: string }[] = [
  { id: 'reverse', label: 'reverse', what: 'read a1…aL, a separator, then write them backwards' },
  { id: 'copy', label: 'copy', what: 'read a1…aL, a separator, then write them again' },
  { id: 'sort', label: 'sort', what: 'read a1…aL, a separator, then write them in ascending order' },
  { id: 'assoc_recall', label: 'associative recall', what: 'read key–value pairs, then a key: answer its value' },
  { id: 'brackets', label: 'brackets (classifier)', what: 'is a string of brackets balanced? (an encoder reads it all)' },
  { id: 'char_lm', label: 'char-LM', what: 'predict the next character of a small embedded text' },
];

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
}
export const taskLimits = (task: TaskName): TaskLimits => (LIMITS.tasks as Record<TaskName, TaskLimits>)[task];
export const TRAINING: Record<'lr' | 'steps' | 'seed', Range> = LIMITS.training;

export const ARCHITECTURES: { id: LabSettings['architecture']; label: string }[] = [
  { id: 'transformer', label: 'Transformer' },
  { id: 'lstm', label: 'LSTM' },
];
/** Fields only a Transformer reads: an LSTM has no attention heads, positions, LayerNorm or score scaling. */
export const TRANSFORMER_ONLY: readonly (keyof LabSettings)[] = ['heads', 'kvHeads', 'positional', 'norm', 'scale'];
export const LSTM_IGNORES = 'An LSTM reads the tokens in order through its recurrent state: it has no attention heads, positional encoding, LayerNorm or score scaling, so those fields are off.';

/** Settings with `task` and the values the form shows when that task is picked. */
export function withTask(s: LabSettings, task: TaskName): LabSettings {
  const t = taskLimits(task);
  return { ...s, task, length: t.length.default!, vocab: t.vocab?.default ?? s.vocab, steps: t.steps };
}

export const DEFAULT_LAB: LabSettings = withTask({ ...(LIMITS.defaults as Omit<LabSettings, 'task' | 'length' | 'vocab' | 'steps'>), task: 'reverse', length: 0, vocab: 0, steps: 0 }, 'reverse');

/** Settings that only steer training: changing them keeps the model (Train continues it). */
export const TRAINING_KEYS: readonly (keyof LabSettings)[] = ['lr', 'batch', 'steps'];
/** What changed from the model's settings to the form's: nothing, only training, or the model itself. */
export function settingsChange(model: LabSettings, form: LabSettings): 'none' | 'training' | 'model' {
  let change: 'none' | 'training' | 'model' = 'none';
  for (const k of Object.keys(form) as (keyof LabSettings)[]) {
    if (form[k] === model[k] || (k === 'vocab' && !taskLimits(form.task).vocab)) continue;
    if (TRANSFORMER_ONLY.includes(k) && form.architecture === 'lstm' && model.architecture === 'lstm') continue; // an LSTM ignores them
    if (!TRAINING_KEYS.includes(k)) return 'model';
    change = 'training';
  }
  return change;
}

const NUM_KEYS: (keyof LabSettings)[] = ['length', 'vocab', 'layers', 'dModel', 'heads', 'kvHeads', 'lr', 'batch', 'steps', 'seed'];

/** The URL's settings; values outside the form's ranges are kept, and labProblems reports them. */
export function settingsFromUrl(url: URL): LabSettings {
  const q = url.searchParams;
  const task = q.get('task');
  const s: LabSettings = task && TASKS.some((t) => t.id === task) ? withTask(DEFAULT_LAB, task as TaskName) : { ...DEFAULT_LAB };
  for (const k of NUM_KEYS) {
    const v = q.get(k);
    if (v != null && v !== '') (s as unknown as Record<string, number>)[k] = Number(v);
  }
  const pos = q.get('positional');
  if (pos === 'none' || pos === 'sinusoidal' || pos === 'learned' || pos === 'rope') s.positional = pos;
  const norm = q.get('norm');
  if (norm === 'pre' || norm === 'post') s.norm = norm;
  if (q.has('scale')) s.scale = q.get('scale') !== '0';
  const arch = q.get('architecture');
  if (ARCHITECTURES.some((a) => a.id === arch)) s.architecture = arch as LabSettings['architecture'];
  return s;
}

export function settingsToUrl(s: LabSettings, url: URL): URL {
  const out = new URL(url);
  out.searchParams.set('task', s.task);
  out.searchParams.set('architecture', s.architecture);
  for (const k of NUM_KEYS) if (k !== 'vocab' || taskLimits(s.task).vocab) out.searchParams.set(k, String(s[k]));
  if (!taskLimits(s.task).vocab) out.searchParams.delete('vocab');
  out.searchParams.set('positional', s.positional);
  out.searchParams.set('norm', s.norm);
  out.searchParams.set('scale', s.scale ? '1' : '0');
  return out;
}

export interface Problem {
  /** The form field the problem is about. */
  field: keyof LabSettings;
  message: string;
}

const inRange = (v: number, r: Range, whole: boolean) => Number.isFinite(v) && v >= r.min && v <= r.max && (!whole || Number.isInteger(v));

/** Everything the engine would refuse (or the form does not offer), in the form's words. */
export function labProblems(s: LabSettings): Problem[] {
  const p: Problem[] = [];
  const t = taskLimits(s.task);
  const task = TASKS.find((x) => x.id === s.task)?.label ?? s.task;
  const whole = (field: keyof LabSettings, r: Range, v: number, context = '') => {
    if (!inRange(v, r, true)) p.push({ field, message: `${r.label} must be a whole number from ${r.min} to ${r.max}${context}, not ${Number.isFinite(v) ? v : 'empty'}.` });
  };
  whole('length', t.length, s.length, ` for ${task}`);
  if (t.vocab) whole('vocab', t.vocab, s.vocab, ` for ${task}`);
  if (s.task === 'assoc_recall' && inRange(s.length, t.length, true) && s.vocab < s.length)
    p.push({ field: 'vocab', message: `keys must be at least the number of pairs (${s.length}): every pair has its own key.` });
  if (!inRange(s.lr, TRAINING.lr, false)) p.push({ field: 'lr', message: `learning rate must be from ${TRAINING.lr.min} to ${TRAINING.lr.max}, not ${Number.isFinite(s.lr) ? s.lr : 'empty'}.` });
  whole('steps', TRAINING.steps, s.steps);
  whole('seed', TRAINING.seed, s.seed);
  if (s.architecture === 'lstm') return p; // the head-count checks are the Transformer's
  if (s.dModel % s.heads) p.push({ field: 'heads', message: `d_model ${s.dModel} is not divisible by ${s.heads} heads.` });
  else if (s.positional === 'rope' && (s.dModel / s.heads) % 2) p.push({ field: 'positional', message: 'RoPE needs an even head width (d_model / heads).' });
  if (s.heads % s.kvHeads) p.push({ field: 'kvHeads', message: `${s.heads} heads cannot share ${s.kvHeads} K/V heads evenly.` });
  return p;
}
