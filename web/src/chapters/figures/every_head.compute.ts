// §3.2: every head of a shipped model on one text: its attention map, the engine's detector scores
// (Model.headScores: previous token, duplicate, induction, first token, self) and, on a poem, the
// poem's four patterns (the engine's lab.poemScores through poem.compute.ts); each
// head is labelled by its best score.
import type { AttnLab, HeadScore, Tensor } from '../../../attnlab';
import { own } from './layer.compute';
import { POEM_PATTERNS, poemScores, poemSlots, poemTexts } from './poem.compute';
import { readText, shippedModel, type ShippedRef } from './shipped.compute';

/** The grid draws every map as its own matrix: a text of more tokens is refused, naming the count. */
export const EVERY_HEAD_MAX_TOKENS = 40;

export interface EveryHeadRequest { figure: 'everyHead'; shipped: ShippedRef; text: string }

/** One head: its scores by pattern name (null: no query row has a key of the pattern) and its best one. */
export interface HeadLabel { layer: number; head: number; scores: Record<string, number | null>; best: { pattern: string; score: number } | null }

export interface EveryHeadFigure {
  figure: 'everyHead';
  model: string;
  text: string;
  labels: string[];
  /** Model.attentionMaps: (L, H, T, T). */
  maps: Tensor;
  /** The patterns scored, in order: the engine's five, then the poem's four on a text with couplets. */
  patterns: string[];
  heads: HeadLabel[];
}

export function everyHead(lab: AttnLab, r: EveryHeadRequest): EveryHeadFigure {
  const model = shippedModel(lab, r.shipped);
  const tokens = readText(model, r.text, 'the text');
  if (tokens.length > EVERY_HEAD_MAX_TOKENS) throw new Error(`the text is ${tokens.length} tokens long; the grid of every head draws at most ${EVERY_HEAD_MAX_TOKENS}: shorten it`);
  const ids = Int32Array.from(tokens.map((t) => t.id));
  const maps = own(model.attentionMaps(ids));
  const engine: HeadScore[] = model.headScores(ids);
  const texts = poemTexts(tokens, r.text);
  const poem = poemSlots(lab, texts).some((s) => s && s.line % 2 === 1) ? poemScores(lab, maps, texts) : null;
  const enginePatterns = Object.keys(engine[0] ?? {}).filter((k) => k !== 'layer' && k !== 'head');
  const patterns = [...enginePatterns, ...(poem ? POEM_PATTERNS : [])];
  const heads = engine.map((e): HeadLabel => {
    const scores: Record<string, number | null> = {};
    for (const p of enginePatterns) scores[p] = e[p as keyof HeadScore] as number | null;
    if (poem) for (const p of POEM_PATTERNS) scores[p] = poem[e.layer][e.head][p];
    let best: HeadLabel['best'] = null;
    for (const p of patterns) {
      const s = scores[p];
      if (s !== null && (!best || s > best.score)) best = { pattern: p, score: s };
    }
    return { layer: e.layer, head: e.head, scores, best };
  });
  return { figure: 'everyHead', model: r.shipped.name, text: r.text, labels: tokens.map((t) => t.label), maps, patterns, heads };
}
