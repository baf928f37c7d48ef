// A regulated poem's form read from its tokens, and every head's scores against the four patterns
// of verse that the §3.2 and §5.2 figures show: both the engine's (lab.poemForm, lab.poemPatterns,
// lab.poemScores: include/attnlab/interp/poem_patterns.hpp, the one definition, described in
// docs/interpretability.md). Here only the tokens' texts are handed over and the answers reshaped.
import type { AttnLab, PoemScore, Tensor } from '../../../attnlab';
import { CHOICES } from '../../../generated/choices.mjs';
import type { ReadToken } from './shipped.compute';

/** The poem's patterns in the engine's order (PoemPattern). */
export const POEM_PATTERNS = CHOICES.PoemPattern;
export type PoemPattern = (typeof POEM_PATTERNS)[number];

/** Where a character sits in the poem: its line (0-based) and column; null for ⟨s⟩, the marks ，/。 and line breaks. */
export interface PoemSlot { line: number; col: number }

/** Each token's text as the engine reads it: '' for the begin token (it covers no text). */
export const poemTexts = (tokens: ReadToken[], text: string) => tokens.map((t) => text.slice(t.start, t.end));

/** The characters' places (lab.poemForm, the closing marks left out: the figures draw characters). */
export function poemSlots(lab: AttnLab, texts: string[]): (PoemSlot | null)[] {
  return lab.poemForm(texts).map((s) => (s && !s.mark ? { line: s.line, col: s.column } : null));
}

/** P_i of every pattern for every query i (lab.poemPatterns' (T, T) masks as key lists). */
export function poemKeys(lab: AttnLab, texts: string[]): Record<PoemPattern, number[][]> {
  const masks = lab.poemPatterns(texts);
  const T = texts.length;
  const keys = (m: Tensor) => Array.from({ length: T }, (_, i) => Array.from({ length: T }, (_, j) => j).filter((j) => m.data[i * T + j] === 1));
  return Object.fromEntries(POEM_PATTERNS.map((p) => [p, keys(masks[p])])) as Record<PoemPattern, number[][]>;
}

/** Every head's poem scores (lab.poemScores) from maps (L, H, T, T): [layer][head] -> a score per pattern. */
export function poemScores(lab: AttnLab, maps: Tensor, texts: string[]): Record<PoemPattern, number | null>[][] {
  const [L, H] = maps.shape;
  const rows: PoemScore[] = lab.poemScores(maps, texts);
  // Each head's record holds its patterns' scores alone (the row's layer and head are its place).
  const patterns = (row: PoemScore) => Object.fromEntries(POEM_PATTERNS.map((p) => [p, row[p]])) as Record<PoemPattern, number | null>;
  return Array.from({ length: L }, (_, l) => Array.from({ length: H }, (_, h) => patterns(rows[l * H + h])));
}
