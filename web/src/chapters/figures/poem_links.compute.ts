// §5.2: one head of tang on a held-out regulated poem: its attention map and its longest strong
// links, each a query character putting at least `threshold` of its weight on a key far back,
// named by what the key is to the query in the poem's form (the previous rhyme, the same
// position of the paired line, the same character, or none of these). The head is the reader's,
// or by default the one whose poem scores (the engine's, through poem.compute.ts) are highest on this poem.
import type { AttnLab, Tensor } from '../../../attnlab';
import { own } from './layer.compute';
import { POEM_PATTERNS, poemKeys, poemScores, poemSlots, poemTexts, type PoemPattern, type PoemSlot } from './poem.compute';
import { readText, shippedModel, type ShippedRef } from './shipped.compute';

export interface PoemLinksRequest {
  figure: 'poemLinks';
  shipped: ShippedRef;
  poem: string;
  /** 'auto' (the best poem-pattern head) or 'layer.head'. */
  head: string;
  threshold: number;
}

export type LinkKind = PoemPattern | 'same_char' | 'other';

export interface PoemLink { query: number; key: number; weight: number; distance: number; kind: LinkKind }

export interface PoemLinksFigure {
  figure: 'poemLinks';
  poem: string;
  labels: string[];
  slots: (PoemSlot | null)[];
  layer: number;
  head: number;
  /** Chosen by the poem scores (auto) or by the reader. */
  chosen: 'auto' | 'reader';
  /** This head's poem scores; and the pattern auto chose it for. */
  scores: Record<PoemPattern, number | null>;
  pattern: PoemPattern | null;
  /** The head's (T, T) weights (Model.attentionMaps[layer][head]). */
  weights: Tensor;
  threshold: number;
  /** Every link between two of the poem's characters (punctuation, line breaks and ⟨s⟩ left out) at or above the threshold, distance ≥ 2, longest first (the page lists the first few). */
  links: PoemLink[];
}

/** The best head by its highest poem score (ties: the lower layer, then head). */
function bestHead(scores: Record<PoemPattern, number | null>[][]): { layer: number; head: number; pattern: PoemPattern } {
  let best = { layer: 0, head: 0, pattern: POEM_PATTERNS[0] as PoemPattern, score: -1 };
  scores.forEach((row, layer) =>
    row.forEach((s, head) => {
      for (const p of POEM_PATTERNS) if ((s[p] ?? -1) > best.score) best = { layer, head, pattern: p, score: s[p]! };
    }),
  );
  if (best.score < 0) throw new Error('the poem has no couplet: type at least two lines ending in ， and 。');
  return best;
}

function parseHead(head: string, L: number, H: number): [number, number] {
  const m = /^(\d+)\.(\d+)$/.exec(head);
  if (!m || Number(m[1]) >= L || Number(m[2]) >= H) throw new Error(`head “${head}” is not a head of tang: 'auto' or layer.head with layer 0..${L - 1}, head 0..${H - 1}`);
  return [Number(m[1]), Number(m[2])];
}

export function poemLinks(lab: AttnLab, r: PoemLinksRequest): PoemLinksFigure {
  if (!(r.threshold > 0 && r.threshold <= 1)) throw new Error(`threshold ${r.threshold} is not a weight in (0, 1]`);
  const model = shippedModel(lab, r.shipped);
  const tokens = readText(model, r.poem, 'the poem');
  const ids = Int32Array.from(tokens.map((t) => t.id));
  const maps = model.attentionMaps(ids);
  const [L, H, T] = maps.shape;
  const texts = poemTexts(tokens, r.poem);
  const slots = poemSlots(lab, texts);
  const scores = poemScores(lab, maps, texts);
  const auto = r.head === 'auto' ? bestHead(scores) : null;
  const [layer, head] = auto ? [auto.layer, auto.head] : parseHead(r.head, L, H);
  const weights = own({ shape: [T, T], data: maps.data.subarray((layer * H + head) * T * T, (layer * H + head + 1) * T * T) });
  const keys = poemKeys(lab, texts);
  const kindOf = (i: number, j: number): LinkKind =>
    POEM_PATTERNS.find((p) => keys[p][i].includes(j)) ?? (tokens[i].id === tokens[j].id ? 'same_char' : 'other');
  const links: PoemLink[] = [];
  for (let i = 0; i < T; i++)
    for (let j = 1; j + 2 <= i; j++) {
      if (!slots[i] || !slots[j]) continue;
      const w = weights.data[i * T + j];
      if (w >= r.threshold) links.push({ query: i, key: j, weight: w, distance: i - j, kind: kindOf(i, j) });
    }
  links.sort((x, y) => y.distance - x.distance || y.weight - x.weight);
  return { figure: 'poemLinks', poem: r.poem, labels: tokens.map((t) => t.label), slots, layer, head, chosen: auto ? 'auto' : 'reader', scores: scores[layer][head],
    pattern: auto ? auto.pattern : null, weights, threshold: r.threshold, links };
}
