// A regulated poem's form read from its tokens, and the attention patterns of verse that the §3.2
// and §5.2 figures score heads by. Line 2m + 1 answers line 2m character for character
// (parallelism), and its last character rhymes with the last of line 2m − 1. A causal model
// predicts a character at the position before it, so each pattern has two forms:
//   paired_line   query: line 2m + 1, column c       keys: line 2m, column c
//   paired_next   query: line 2m + 1, column c       keys: line 2m, column c + 1 (what the next character answers)
//   rhyme         query: the last of line 2m + 1      keys: the last of line 2m − 1 (m >= 1)
//   rhyme_next    query: the one before it            keys: the last of line 2m − 1 (the rhyme about to be written)
// Each is a set P_i of keys for query row i, and a head's score is engine/interp's detector score
// (include/attnlab/interp/detectors.hpp): the mean, over the rows that have a pattern key, of the
// share of the row's weight on those keys, computed here from the engine's attention maps.
import type { Tensor } from '../../../attnlab';
import type { ReadToken } from './shipped.compute';

/** The poem's patterns, named as the page names them. */
export const POEM_PATTERNS = ['paired_line', 'paired_next', 'rhyme', 'rhyme_next'] as const;
export type PoemPattern = (typeof POEM_PATTERNS)[number];

/** Where each token sits in the poem: its line (0-based) and column, or null (⟨s⟩, punctuation, line breaks). */
export interface PoemSlot { line: number; col: number }

const isHan = (s: string) => /^\p{Script=Han}$/u.test(s);

/**
 * The lines of a poem's tokens: a line is a run of Han characters ended by ， or 。 (the form
 * tang is trained on). Tokens outside lines get null.
 */
export function poemSlots(tokens: ReadToken[]): (PoemSlot | null)[] {
  let line = 0;
  let col = 0;
  return tokens.map((t) => {
    if (isHan(t.label)) return { line, col: col++ };
    if ((t.label === '，' || t.label === '。') && col > 0) {
      line++;
      col = 0;
    }
    return null;
  });
}

/** Each line's last column, by line. */
function lineEnds(slots: (PoemSlot | null)[]): Map<number, number> {
  const ends = new Map<number, number>();
  for (const s of slots) if (s && (ends.get(s.line) ?? -1) < s.col) ends.set(s.line, s.col);
  return ends;
}

/** P_i of `pattern` for every query i: the keys (positions) the pattern expects, possibly none. */
export function poemPattern(pattern: PoemPattern, slots: (PoemSlot | null)[]): number[][] {
  const at = new Map<string, number>();
  slots.forEach((s, i) => s && at.set(`${s.line}.${s.col}`, i));
  const ends = lineEnds(slots);
  const key = (line: number, col: number | undefined) => (col === undefined ? undefined : at.get(`${line}.${col}`));
  return slots.map((s) => {
    if (!s || s.line % 2 === 0) return [];
    let k: number | undefined;
    if (pattern === 'paired_line') k = key(s.line - 1, s.col);
    else if (pattern === 'paired_next') k = key(s.line - 1, s.col + 1);
    else if (s.line >= 3 && s.col === (ends.get(s.line)! - (pattern === 'rhyme' ? 0 : 1))) k = key(s.line - 2, ends.get(s.line - 2));
    return k === undefined ? [] : [k];
  });
}

/**
 * A head's score against pattern keys P (one list per query row) from its weights (T, T): the mean
 * over rows i > 0 with keys and weight of Σ_{j∈P_i} A_ij / Σ_j A_ij, null when no row has a key
 * (as interp::pattern_score).
 */
export function patternScore(weights: Float32Array, T: number, keys: number[][]): number | null {
  let sum = 0;
  let rows = 0;
  for (let i = 1; i < T; i++) {
    if (!keys[i].length) continue;
    let all = 0;
    for (let j = 0; j < T; j++) all += weights[i * T + j];
    if (!(all > 0)) continue;
    let on = 0;
    for (const j of keys[i]) on += weights[i * T + j];
    sum += on / all;
    rows++;
  }
  return rows ? sum / rows : null;
}

/** Every head's poem scores from maps (L, H, T, T): [layer][head] -> { paired_line, rhyme }. */
export function poemScores(maps: Tensor, slots: (PoemSlot | null)[]): Record<PoemPattern, number | null>[][] {
  const [L, H, T] = maps.shape;
  const keys = Object.fromEntries(POEM_PATTERNS.map((p) => [p, poemPattern(p, slots)])) as Record<PoemPattern, number[][]>;
  return Array.from({ length: L }, (_, l) =>
    Array.from({ length: H }, (_, h) => {
      const w = maps.data.subarray((l * H + h) * T * T, (l * H + h + 1) * T * T);
      return Object.fromEntries(POEM_PATTERNS.map((p) => [p, patternScore(w, T, keys[p])])) as Record<PoemPattern, number | null>;
    }),
  );
}
