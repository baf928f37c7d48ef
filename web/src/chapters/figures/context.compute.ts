// §1.3: the same word in two contexts through a shipped model. Each occurrence's vector in the
// residual stream (Model.residuals: entering each block, and leaving the last) is compared
// across the two sentences by cosine distance, layer by layer: at the embedding (before block 0)
// the two are the same token's vector, so the distance is 0; what the blocks add is the context.
// And which keys each occurrence attends to: one head's weights, or the mean over a layer's heads.
import type { AttnLab, Model } from '../../../attnlab';
import { mapRow, readText, shippedModel, type ReadToken, type ShippedRef } from './shipped.compute';

export interface ContextRequest {
  figure: 'context';
  shipped: ShippedRef;
  /** The two sentences and the word (one token in each) whose occurrences are compared. */
  a: string;
  b: string;
  word: string;
  layer: number;
  /** A head of `layer`, or -1: the mean of its heads' weights. */
  head: number;
}

export interface ContextSentence {
  text: string;
  labels: string[];
  /** The word's tokens (its first occurrence) and the last of them, the one the figure follows. */
  pieces: number[];
  position: number;
  /** Its attention row at (layer, head): the weight on each key 0..position. */
  row: number[];
  /** The keys it weighs most, largest first (at most 3). */
  top: { key: number; label: string; weight: number }[];
}

export interface ContextFigure {
  figure: 'context';
  model: string;
  word: string;
  layers: number;
  heads: number;
  layer: number;
  head: number;
  sentences: [ContextSentence, ContextSentence];
  /** (L + 1): 1 − cos between the two occurrences' residual vectors, entering block l (l = L: leaving the last). */
  distance: number[];
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The tokens that spell the first occurrence of `word` in `text` (a whole word: not inside a
 * longer one, except for Han characters, which have no word boundaries), or an Error saying why
 * there are none. A BPE may spell a word with several tokens (brown reads " bank" as " b" + "ank");
 * the figure follows the last of them, where a causal model has read the whole word.
 */
export function wordTokens(tokens: ReadToken[], text: string, word: string, what: string): number[] {
  const w = word.trim();
  if (!w) throw new Error('the word to compare is empty: type a word that both sentences contain');
  const edge = /^\p{Script=Han}+$/u.test(w) ? '' : '(?<![\\p{L}\\p{N}])';
  const m = new RegExp(`${edge}${escapeRegExp(w)}${edge ? '(?![\\p{L}\\p{N}])' : ''}`, 'u').exec(text);
  if (!m) throw new Error(`${what} has no “${w}”: both sentences must contain the word`);
  const at = m.index;
  const end = at + w.length;
  const pieces = tokens.flatMap((t, i) => (t.end > at && t.start < end ? [i] : []));
  const first = tokens[pieces[0]];
  const last = tokens[pieces[pieces.length - 1]];
  // A token may bring the space before the word (GPT-2-style BPE), never a letter of a neighbour.
  if (text.slice(first.start, at).trim() !== '' || last.end > end) {
    throw new Error(`“${w}” in ${what} shares a token with its neighbours (${pieces.map((i) => `“${tokens[i].label}”`).join(' + ')}); choose a word the tokenizer reads on its own`);
  }
  return pieces;
}

export const cosineDistance = (a: Float32Array, b: Float32Array): number => {
  let ab = 0;
  let aa = 0;
  let bb = 0;
  for (let c = 0; c < a.length; c++) {
    ab += a[c] * b[c];
    aa += a[c] * a[c];
    bb += b[c] * b[c];
  }
  return 1 - ab / Math.sqrt(aa * bb);
};

function sentence(model: Model, text: string, word: string, what: string, layer: number, head: number) {
  const tokens = readText(model, text, what);
  const pieces = wordTokens(tokens, text, word, what);
  const position = pieces[pieces.length - 1];
  const ids = Int32Array.from(tokens.map((t) => t.id));
  const maps = model.attentionMaps(ids);
  const H = maps.shape[1];
  const heads = head < 0 ? Array.from({ length: H }, (_, h) => h) : [head];
  const row = new Array<number>(position + 1).fill(0);
  for (const h of heads) mapRow(maps, layer, h, position).subarray(0, position + 1).forEach((w, j) => (row[j] += w / heads.length));
  const top = row.map((weight, key) => ({ key, label: tokens[key].label, weight })).sort((x, y) => y.weight - x.weight || x.key - y.key).slice(0, 3);
  const res = model.residuals(ids);
  const id = tokens[position].id;
  const s: ContextSentence = { text, labels: tokens.map((t) => t.label), pieces, position, row, top };
  return { s, res, id };
}

export function context(lab: AttnLab, r: ContextRequest): ContextFigure {
  const model = shippedModel(lab, r.shipped);
  const { numLayers: L, numHeads: H } = model.config();
  if (!Number.isInteger(r.layer) || r.layer < 0 || r.layer >= L) throw new Error(`layer ${r.layer} is not a layer of ${r.shipped.name} (0..${L - 1})`);
  if (!Number.isInteger(r.head) || r.head < -1 || r.head >= H) throw new Error(`head ${r.head} is not a head of ${r.shipped.name} (0..${H - 1}, or the mean)`);
  const a = sentence(model, r.a, r.word, 'sentence A', r.layer, r.head);
  const b = sentence(model, r.b, r.word, 'sentence B', r.layer, r.head);
  if (a.id !== b.id) {
    throw new Error(`“${r.word.trim()}” ends in different tokens in the two sentences (“${a.s.labels[a.s.position]}” in A, “${b.s.labels[b.s.position]}” in B): write it the same way in both`);
  }
  // Residuals (L + 1, T, C): each occurrence's vector at every depth.
  const [, Ta, C] = a.res.shape;
  const Tb = b.res.shape[1];
  const distance = Array.from({ length: L + 1 }, (_, l) =>
    cosineDistance(a.res.data.subarray((l * Ta + a.s.position) * C, (l * Ta + a.s.position + 1) * C), b.res.data.subarray((l * Tb + b.s.position) * C, (l * Tb + b.s.position + 1) * C)),
  );
  return { figure: 'context', model: r.shipped.name, word: r.word.trim(), layers: L, heads: H, layer: r.layer, head: r.head, sentences: [a.s, b.s], distance };
}
