import { renderWeightedSum } from '../components/weighted_sum_view';
import type { Step } from '../step';
import { headLabel, kvHead, stage, tokens } from './helpers';

export const weightedSumStep: Step = {
  id: 'weighted-sum',
  title: 'Weights · V',
  perHead: true,
  beats: (c) => c.derived.T + 1,
  columns: (c) => c.derived.S + 2 * c.derived.D + 6,
  caption: (c) => `output row ${c.beat > 0 ? c.beat - 1 : 0} = Σ_j A[i][j] · v_j`,
  explain: (c) => `<p>Finally each token collects information: its output row is a <b>weighted average of the value rows</b>, using its attention weights. A token that puts 80% of its weight on “${c.input.tokens[c.input.tokens.length - 1]}” gets mostly that token’s value.</p>
      <p>Below, the selected row’s recipe: every value row scaled by its weight, then added up. Masked tokens contribute exactly nothing (weight 0).</p>`,
  render(host, c) {
    const i = c.beat > 0 ? c.beat - 1 : 0;
    const w = stage(c, 'weights', c.head);
    const v = stage(c, 'v', kvHead(c));
    const masked = stage(c, 'masked', c.head);
    const [S, D] = v.shape;
    const contrib = new Float32Array(S * D);
    for (let j = 0; j < S; j++) for (let d = 0; d < D; d++) contrib[j * D + d] = w.data[i * S + j] * v.data[j * D + d];
    renderWeightedSum(host, {
      tokens: tokens(c),
      keyTokens: tokens(c),
      weights: w,
      v,
      context: stage(c, 'context', c.head),
      vName: 'v',
      headLabel: headLabel(c, true),
      cell: c.cell,
      activeRow: i,
      contributions: { shape: [S, D], data: contrib },
      masked: (a, b) => masked.data[a * S + b] === -Infinity,
    });
  },
};
