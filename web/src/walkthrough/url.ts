// Walkthrough settings <-> URL query string, so a link reopens the same walkthrough (the lab does
// the same with its own keys, lab/settings.ts). The page's two views share one query string, so
// every walkthrough key carries the prefix "w." (the lab owns dModel, heads, seed, ...).
// Only the random-weights settings are kept: a lab-trained model lives in the lab, not in a link.
import { DEFAULT_SETTINGS, D_MODELS, HEAD_COUNTS, MASKS, MAX_SEED, MAX_SENTENCE_CHARS, POSITIONALS, settingsProblems, tokenize, type WalkSettings } from './inputs';
import { SPEEDS } from './state';

export interface WalkUrlState {
  settings: WalkSettings;
  speed: number;
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
} as const;

/** The number at `key` if it is one of `allowed`, else null. */
function oneOf(q: URLSearchParams, key: string, allowed: number[]): number | null {
  const raw = q.get(key);
  if (raw == null || raw.trim() === '') return null;
  const v = Number(raw);
  return allowed.includes(v) ? v : null;
}

/**
 * The walkthrough a URL describes. Each missing or invalid value falls back to its default; if the
 * architecture values are each valid but do not fit together (d_model 6 with 4 heads), the
 * architecture falls back as a whole, so a link never opens on an error.
 */
export function walkFromUrl(url: URL): WalkUrlState {
  const q = url.searchParams;
  const s: WalkSettings = { ...DEFAULT_SETTINGS };
  const sentence = q.get(KEY.sentence);
  if (sentence != null && sentence.length <= MAX_SENTENCE_CHARS && tokenize(sentence).length > 0) s.sentence = sentence;
  s.dModel = oneOf(q, KEY.dModel, D_MODELS) ?? s.dModel;
  s.heads = oneOf(q, KEY.heads, HEAD_COUNTS) ?? s.heads;
  s.kvHeads = oneOf(q, KEY.kvHeads, HEAD_COUNTS) ?? s.kvHeads;
  const positional = POSITIONALS.find((p) => p.id === q.get(KEY.positional));
  if (positional) s.positional = positional.id;
  const mask = MASKS.find((m) => m.id === q.get(KEY.mask));
  if (mask) s.mask = mask.id;
  const seed = q.get(KEY.seed);
  if (seed != null && /^\d+$/.test(seed) && Number(seed) <= MAX_SEED) s.seed = Number(seed);
  const scale = q.get(KEY.scale);
  if (scale === '0' || scale === '1') s.scale = scale === '1';
  if (settingsProblems(s).length) {
    const d = DEFAULT_SETTINGS;
    Object.assign(s, { dModel: d.dModel, heads: d.heads, kvHeads: d.kvHeads, positional: d.positional });
  }
  return { settings: s, speed: oneOf(q, KEY.speed, SPEEDS) ?? DEFAULT_SPEED };
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
  return out;
}
