// Walkthrough settings <-> URL query string, so a link reopens the same walkthrough (the lab does
// the same with its own keys, lab/settings.ts). The page's two views share one query string, so
// every walkthrough key carries the prefix "w." (the lab owns dModel, heads, seed, ...).
// Only the random-weights settings are kept: a lab-trained model lives in the lab, not in a link.
import { t } from '../i18n';
import { DEFAULT_SETTINGS, D_MODELS, HEAD_COUNTS, INPUT_SCALES, MASKS, NORMALIZERS, PRECISIONS, MAX_SEED, POSITIONALS, settingsProblems, tokenize, type WalkSettings } from './inputs';
import { SPEEDS } from './state';
import { STEPS } from './steps';

export interface WalkUrlState {
  settings: WalkSettings;
  speed: number;
  /** The step shown (0-based; the URL counts from 1 as the page does). */
  step: number;
  /** The query head the per-head steps show. */
  head: number;
}

/** A link's walkthrough, and each value it held that could not be used, in words. */
export interface WalkFromUrl extends WalkUrlState {
  notices: string[];
}

export const DEFAULT_SPEED = 1;

const KEY = {
  sentence: 'w.sentence',
  dModel: 'w.dModel',
  heads: 'w.heads',
  kvHeads: 'w.kvHeads',
  positional: 'w.positional',
  mask: 'w.mask',
  seed: 'w.seed',
  scale: 'w.scale',
  speed: 'w.speed',
  step: 'w.step',
  head: 'w.head',
  context: 'w.context',
  normalizer: 'w.normalizer',
  precision: 'w.precision',
  inputScale: 'w.inputScale',
} as const;

/**
 * The walkthrough a URL describes. A missing value takes its default silently; a present value
 * that cannot be used takes its default too, and a notice says which and why. If the architecture
 * values are each valid but do not fit together (d_model 6 with 4 heads), the architecture falls
 * back as a whole, so a link never opens on an error.
 */
export function walkFromUrl(url: URL): WalkFromUrl {
  const q = url.searchParams;
  const s: WalkSettings = { ...DEFAULT_SETTINGS };
  const notices: string[] = [];
  const bad = (key: string, raw: string, why: string, used: string | number) =>
    notices.push(t('walk.url.bad', { key, raw, why, used }));
  /** The number at `key` if it is one of `allowed`, else null (and a notice when present). */
  const oneOf = (key: string, allowed: number[], fallback: number, what: string): number => {
    const raw = q.get(key);
    if (raw == null) return fallback;
    const v = Number(raw);
    if (raw.trim() !== '' && allowed.includes(v)) return v;
    bad(key, raw, t('walk.url.notOf', { what, allowed: allowed.join(', ') }), fallback);
    return fallback;
  };
  const sentence = q.get(KEY.sentence);
  if (sentence != null) {
    if (tokenize(sentence).length > 0) s.sentence = sentence;
    else bad(KEY.sentence, sentence, t('walk.url.noWords'), `“${s.sentence}”`);
  }
  s.dModel = oneOf(KEY.dModel, D_MODELS, s.dModel, t('walk.url.dModel'));
  s.heads = oneOf(KEY.heads, HEAD_COUNTS, s.heads, t('walk.url.heads'));
  s.kvHeads = oneOf(KEY.kvHeads, HEAD_COUNTS, s.kvHeads, t('walk.url.kvHeads'));
  const positional = q.get(KEY.positional);
  if (positional != null) {
    const p = POSITIONALS.find((x) => x.id === positional);
    if (p) s.positional = p.id;
    else bad(KEY.positional, positional, t('walk.url.notOneOf', { allowed: POSITIONALS.map((x) => x.id).join(', ') }), s.positional);
  }
  const mask = q.get(KEY.mask);
  if (mask != null) {
    const m = MASKS.find((x) => x.id === mask);
    if (m) s.mask = m.id;
    else bad(KEY.mask, mask, t('walk.url.notOneOf', { allowed: MASKS.map((x) => x.id).join(', ') }), s.mask);
  }
  const seed = q.get(KEY.seed);
  if (seed != null) {
    if (/^\d+$/.test(seed) && Number(seed) <= MAX_SEED) s.seed = Number(seed);
    else bad(KEY.seed, seed, t('walk.url.seed', { max: MAX_SEED }), s.seed);
  }
  const scale = q.get(KEY.scale);
  if (scale != null) {
    if (scale === '0' || scale === '1') s.scale = scale === '1';
    else bad(KEY.scale, scale, t('walk.url.zeroOne'), s.scale ? 1 : 0);
  }
  // Cross-attention's context sentence: written only when set, so self-attention links stay as they were.
  const context = q.get(KEY.context);
  if (context != null && context.trim()) {
    const conflict = [s.mask !== 'none' ? t('walk.problem.crossMask') : null, s.positional !== 'none' ? t('walk.problem.crossPositions') : null].filter(Boolean).join(' ');
    if (conflict) bad(KEY.context, context, conflict, '“”');
    else s.context = context;
  }
  // Normaliser, number format and input size: written only when not the default.
  const normalizer = q.get(KEY.normalizer);
  if (normalizer != null) {
    if ((NORMALIZERS as string[]).includes(normalizer)) s.normalizer = normalizer as WalkSettings['normalizer'];
    else bad(KEY.normalizer, normalizer, t('walk.url.notOneOf', { allowed: NORMALIZERS.join(', ') }), 'softmax');
  }
  const precision = q.get(KEY.precision);
  if (precision != null) {
    if ((PRECISIONS as string[]).includes(precision)) s.precision = precision as WalkSettings['precision'];
    else bad(KEY.precision, precision, t('walk.url.notOneOf', { allowed: PRECISIONS.join(', ') }), 'fp32');
  }
  const inputScale = oneOf(KEY.inputScale, INPUT_SCALES, 1, t('walk.inputScale'));
  if (inputScale !== 1) s.inputScale = inputScale;
  const problems = settingsProblems(s);
  if (problems.length) {
    const d = DEFAULT_SETTINGS;
    Object.assign(s, { dModel: d.dModel, heads: d.heads, kvHeads: d.kvHeads, positional: d.positional });
    notices.push(t('walk.url.architecture', { problems: problems.join(' '), d: d.dModel, h: d.heads, kv: d.kvHeads, pos: d.positional }));
  }
  const speed = oneOf(KEY.speed, SPEEDS, DEFAULT_SPEED, t('walk.url.speed'));
  const step = oneOf(KEY.step, STEPS.map((_, i) => i + 1), 1, t('walk.url.step', { n: STEPS.length })) - 1;
  const head = oneOf(KEY.head, Array.from({ length: s.heads }, (_, h) => h), 0, t('walk.url.head', { n: s.heads }));
  return { settings: s, speed, step, head, notices };
}

/** `url` with the walkthrough's keys set to `w` (other keys, the lab's and the view's, kept). */
export function walkToUrl(w: WalkUrlState, url: URL): URL {
  const out = new URL(url);
  const s = w.settings;
  const q = out.searchParams;
  q.set(KEY.sentence, s.sentence);
  q.set(KEY.dModel, String(s.dModel));
  q.set(KEY.heads, String(s.heads));
  q.set(KEY.kvHeads, String(s.kvHeads));
  q.set(KEY.positional, s.positional);
  q.set(KEY.mask, s.mask);
  q.set(KEY.seed, String(s.seed));
  q.set(KEY.scale, s.scale ? '1' : '0');
  q.set(KEY.speed, String(w.speed));
  q.set(KEY.step, String(w.step + 1));
  q.set(KEY.head, String(w.head));
  if (s.context?.trim()) q.set(KEY.context, s.context);
  else q.delete(KEY.context);
  const optional = (key: string, v: string | number | undefined, fallback: string | number) => (v != null && v !== fallback ? q.set(key, String(v)) : q.delete(key));
  optional(KEY.normalizer, s.normalizer, 'softmax');
  optional(KEY.precision, s.precision, 'fp32');
  optional(KEY.inputScale, s.inputScale, 1);
  return out;
}
