import { renderScores } from '../components/scores_view';
import { dotTerms, row, transpose } from '../derive';
import type { Step } from '../step';
import { headLabel, kvHead, rope, stage, tokens } from './helpers';

export const scoresStep: Step = {
  id: 'scores',
  title: 'Scores: q · k',
  perHead: true,
  beats: (c) => c.derived.T * c.derived.S + 1,
  columns: (c) => 2 * c.derived.D + c.derived.S + 4,
  caption: (c) => {
    if (c.beat === 0) return 'hover a score, or Tab to it, to see where it comes from';
    const S = c.derived.S;
    const i = Math.floor((c.beat - 1) / S);
    const j = (c.beat - 1) % S;
    return `S[${i}][${j}]: how well “${c.input.tokens[i]}” (query) matches “${c.input.tokens[j]}” (key)`;
  },
  explain: (c) => `<p>Now every query is compared with every key. The comparison is a <b>dot product</b>: multiply the two vectors number by number and add. A large positive score means “this key is what I am looking for”.</p>
     <p>Doing it for all pairs at once is one matrix product, <b>S = q · kᵀ</b>: row i of S holds the scores of token i against every token j. Hover any score S[i][j]: its query row and key column light up, and the tooltip lists the ${c.derived.D} products.</p>
     ${rope(c) ? '<p>With RoPE, q and k were first rotated by their positions (q_rot, k_rot, recorded by the engine), so the score depends on how far apart the two tokens are.</p>' : ''}`,
  render(host, c) {
    const kv = kvHead(c);
    const q = stage(c, rope(c) ? 'q_rot' : 'q', c.head);
    const k = stage(c, rope(c) ? 'k_rot' : 'k', kv);
    const S = c.derived.S;
    const animating = c.beat > 0;
    const focus: [number, number] | null = c.hover ?? (animating ? [Math.floor((c.beat - 1) / S), (c.beat - 1) % S] : null);
    renderScores(host, {
      tokens: tokens(c),
      keyTokens: tokens(c),
      q,
      kT: transpose(k),
      scores: stage(c, 'scores', c.head),
      qName: rope(c) ? 'q_rot' : 'q',
      kName: rope(c) ? 'k_rot' : 'k',
      headLabel: headLabel(c),
      cell: c.cell,
      focus,
      computed: animating ? c.beat - 1 : null,
      terms: (i, j) => dotTerms(row(q, i), row(k, j)),
      onHover: c.setHover,
    });
  },
};
