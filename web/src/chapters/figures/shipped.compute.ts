// The models attnlab trained on real text and ships with the page (models/tang, models/brown), as
// the figures' computations read them in the engine worker: the worker fetches and opens one the
// first time a figure asks for it (engine/worker/figure_models.ts) and keeps it; a computation
// takes it from here and reads a text with the model's own tokenizer.
import type { AttnLab, Model } from '../../../attnlab';
import { shippedFile, type ShippedName, type ShippedRef } from '../../engine/protocol/shipped';

export type { ShippedName, ShippedRef };

const held = new Map<ShippedName, Model>();

export const isHeld = (name: ShippedName) => held.has(name);

/** Keeps `model` as the shipped model `name` (built by Model.load from its file). */
export function holdShipped(name: ShippedName, model: Model) {
  held.get(name)?.delete();
  held.set(name, model);
}

/** The shipped model `name`, opened by the worker before the computation runs. */
export function shippedModel(_lab: AttnLab, ref: ShippedRef): Model {
  const m = held.get(ref.name);
  if (!m) throw new Error(`the shipped model ${shippedFile(ref.name)} is not open in the engine worker (it is fetched from ${ref.url} before a figure reads it)`);
  return m;
}

/** One token of a text as the model reads it: its id, its label, the part of the text it covers. */
export interface ReadToken { id: number; label: string; start: number; end: number }

/** A token's label on the page: its text, a leading space shown as ␣, a line break as ⏎, the begin token as ⟨s⟩. */
export const tokenLabel = (text: string) => text.replace(/^ /, '␣').replace(/\n/g, '⏎');

/**
 * `text` as the model reads it (its tokenizer's tokens, after the begin token a character model
 * was trained to read first), at most the model's maxLen tokens: a longer text is an Error naming
 * both counts.
 */
export function readText(model: Model, text: string, what: string): ReadToken[] {
  const tok = model.tokenizer();
  if (!tok) throw new Error('the shipped model carries no tokenizer');
  try {
    const out: ReadToken[] = tok.tokens(text).map((s) => ({ id: s.id, label: tokenLabel(text.slice(s.start, s.end)), start: s.start, end: s.end }));
    const begin = tok.beginId();
    if (begin !== null) out.unshift({ id: begin, label: '⟨s⟩', start: 0, end: 0 });
    if (!out.length || (begin !== null && out.length === 1)) throw new Error(`${what} has no tokens: type a text first`);
    const max = model.config().maxLen;
    if (out.length > max) throw new Error(`${what} is ${out.length} tokens long; the model reads at most ${max} (maxLen): shorten it`);
    return out;
  } finally {
    tok.delete();
  }
}

/** (L, H, T, T) maps: head h of layer l, row i (T weights). */
export function mapRow(maps: { shape: number[]; data: Float32Array }, l: number, h: number, i: number): Float32Array {
  const [, H, T] = maps.shape;
  const at = ((l * H + h) * T + i) * T;
  return maps.data.slice(at, at + T);
}
