// Lab settings: per-task fields and ranges (engine/protocol/limits.json, checked against the engine
// by tests/wasm/lab_limits.test.mjs), validation in the form's words, and the URL query string (so
// a link reproduces a run). Token layouts live in the engine (task.encode / task.decode).
import type { PositionalKind } from '../../attnlab';
import { t, type Key } from '../i18n';
import { en } from '../i18n/en';
import type { LabSettings, TaskName, TextCorpus } from '../engine/protocol/lab';
import { LAB_DEFAULTS, taskLimits, TRAINING, type Range } from '../engine/protocol/limits';
import { ENGINE_SWITCHES, SWITCH_DEFAULTS, switchValue } from '../engine/protocol/switches';
import { CHOICES } from '../../generated/choices.mjs';

export const TASKS: { id: TaskName; label: () => string; what: () => string }[] = (['reverse', 'copy', 'sort', 'assoc_recall', 'brackets', 'char_lm', 'series', 'shapes', 'text'] as const).map((id) => ({
  id,
  label: () => t(`lab.task.${id}`),
  what: () => t(`lab.task.${id}.what`),
}));
/** A task's name in the page's language. */
export const taskLabel = (task: TaskName): string => TASKS.find((x) => x.id === task)?.label() ?? task;
/** A numeric field's name in the page's language (limits.json spells it in English). */
export const rangeLabel = (r: Range): string => {
  const key = `lab.field.${r.label}` as Key;
  return key in en ? t(key) : r.label;
};

export const ARCHITECTURES: { id: LabSettings['architecture']; label: string }[] = [
  { id: 'transformer', label: 'Transformer' },
  { id: 'lstm', label: 'LSTM' },
  { id: 'vit', label: 'ViT' },
  { id: 'swin', label: 'Swin' },
];
/** The positions the form offers: a token model's, every engine PositionalKind but the forecaster's time. */
export const POSITIONALS = CHOICES.PositionalKind.filter((p): p is Exclude<PositionalKind, 'time'> => p !== 'time');
/** Pre-LN or Post-LN: the engine's NormPlacement. */
export const NORMS = CHOICES.NormPlacement;

/** Train on text's corpora: the Tang poems, the Brown corpus, the reader's own file. */
export const TEXT_CORPORA: readonly TextCorpus[] = ['tang', 'brown', 'file'];

/** The architectures a task trains: images need a ViT or a Swin; text a Transformer decoder (its heads open in the walkthrough); the others read sequences. */
export const taskArchitectures = (task: TaskName): LabSettings['architecture'][] => (task === 'shapes' ? ['vit', 'swin'] : task === 'text' ? ['transformer'] : ['transformer', 'lstm']);
/** Fields only a Transformer reads: an LSTM has no attention heads, positions, LayerNorm or score scaling. */
export const TRANSFORMER_ONLY: readonly (keyof LabSettings)[] = ['heads', 'kvHeads', 'positional', 'norm', 'scale', ...ENGINE_SWITCHES.filter((w) => w.target === 'model').map((w) => w.key)];

/** Settings with `task` and the values the form shows when that task is picked. */
export function withTask(s: LabSettings, task: TaskName): LabSettings {
  const t = taskLimits(task);
  const archs = taskArchitectures(task);
  return { ...s, task, length: t.length.default!, vocab: t.vocab?.default ?? s.vocab, steps: t.steps, architecture: archs.includes(s.architecture) ? s.architecture : archs[0] };
}

export const DEFAULT_LAB: LabSettings = withTask({ ...LAB_DEFAULTS, ...SWITCH_DEFAULTS, task: 'reverse', length: 0, vocab: 0, steps: 0 }, 'reverse');

/** Settings that only steer training: changing them keeps the model (Train continues it). */
export const TRAINING_KEYS: readonly (keyof LabSettings)[] = ['lr', 'batch', 'steps', ...ENGINE_SWITCHES.filter((w) => w.target === 'trainer').map((w) => w.key)];
/** What changed from the model's settings to the form's: nothing, only training, or the model itself. */
export function settingsChange(model: LabSettings, form: LabSettings): 'none' | 'training' | 'model' {
  let change: 'none' | 'training' | 'model' = 'none';
  for (const k of Object.keys(form) as (keyof LabSettings)[]) {
    if (form[k] === model[k] || (k === 'vocab' && !taskLimits(form.task).vocab) || (k === 'corpus' && form.task !== 'text')) continue;
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
  const positional = POSITIONALS.find((p) => p === pos);
  if (positional) s.positional = positional;
  const norm = NORMS.find((n) => n === q.get('norm'));
  if (norm) s.norm = norm;
  if (q.has('scale')) s.scale = q.get('scale') !== '0';
  const corpus = TEXT_CORPORA.find((c) => c === q.get('corpus'));
  if (corpus) s.corpus = corpus;
  const arch = q.get('architecture');
  if (ARCHITECTURES.some((a) => a.id === arch)) s.architecture = arch as LabSettings['architecture'];
  // Engine switches: one of the form's choices, else the default.
  for (const w of ENGINE_SWITCHES) {
    const v = q.get(w.key);
    if (v == null) continue;
    const value = w.choices === 'boolean' ? v === '1' : w.choices.find((c) => String(c) === v);
    if (value !== undefined) (s as unknown as Record<string, unknown>)[w.key] = value;
  }
  return s;
}

export function settingsToUrl(s: LabSettings, url: URL): URL {
  const out = new URL(url);
  out.searchParams.set('task', s.task);
  out.searchParams.set('architecture', s.architecture);
  for (const k of NUM_KEYS) if (k !== 'vocab' || taskLimits(s.task).vocab) out.searchParams.set(k, String(s[k]));
  if (!taskLimits(s.task).vocab) out.searchParams.delete('vocab');
  if (s.task === 'text') out.searchParams.set('corpus', s.corpus);
  else out.searchParams.delete('corpus');
  out.searchParams.set('positional', s.positional);
  out.searchParams.set('norm', s.norm);
  out.searchParams.set('scale', s.scale ? '1' : '0');
  // Engine switches only when not their default, so a plain link stays short.
  for (const w of ENGINE_SWITCHES) {
    const v = switchValue(s, w.key);
    if (v === w.default) out.searchParams.delete(w.key);
    else out.searchParams.set(w.key, typeof v === 'boolean' ? (v ? '1' : '0') : String(v));
  }
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
  const task = taskLabel(s.task);
  const value = (v: number) => (Number.isFinite(v) ? v : t('lab.problem.empty'));
  const whole = (field: keyof LabSettings, r: Range, v: number, forTask: boolean) => {
    if (!inRange(v, r, true)) p.push({ field, message: t(forTask ? 'lab.problem.wholeFor' : 'lab.problem.whole', { field: rangeLabel(r), min: r.min, max: r.max, task, v: value(v) }) });
  };
  const l = taskLimits(s.task);
  whole('length', l.length, s.length, true);
  if (l.vocab) whole('vocab', l.vocab, s.vocab, true);
  if (s.task === 'assoc_recall' && inRange(s.length, l.length, true) && s.vocab < s.length)
    p.push({ field: 'vocab', message: t('lab.problem.keys', { n: s.length }) });
  if (!inRange(s.lr, TRAINING.lr, false)) p.push({ field: 'lr', message: t('lab.problem.lr', { min: TRAINING.lr.min, max: TRAINING.lr.max, v: value(s.lr) }) });
  whole('steps', TRAINING.steps, s.steps, false);
  whole('seed', TRAINING.seed, s.seed, false);
  const archs = taskArchitectures(s.task);
  if (!archs.includes(s.architecture)) p.push({ field: 'architecture', message: t('lab.problem.arch', { task, archs: archs.map((a) => ARCHITECTURES.find((x) => x.id === a)!.label).join(' / ') }) });
  if (s.architecture === 'lstm') return p; // the head-count checks are the Transformer's
  if (s.dModel % s.heads) p.push({ field: 'heads', message: t('lab.problem.heads', { d: s.dModel, h: s.heads }) });
  else if (s.positional === 'rope' && (s.dModel / s.heads) % 2) p.push({ field: 'positional', message: t('lab.problem.rope') });
  if (s.heads % s.kvHeads) p.push({ field: 'kvHeads', message: t('lab.problem.kv', { h: s.heads, kv: s.kvHeads }) });
  return p;
}
