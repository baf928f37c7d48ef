import { renderSoftmax } from '../components/softmax_view';
import type { Step } from '../step';
import { stage, tokens } from './helpers';

export const softmaxStep: Step = {
  id: 'softmax',
  title: 'Softmax: scores → weights',
  perHead: true,
  beats: (c) => c.derived.T + 1,
  columns: (c) => 2 * c.derived.S + 6,
  caption: (c) => (c.beat > 0 ? `row ${c.beat - 1}: e^score, then divide by the row’s total` : ''),
  explain: () => `<p><b>Softmax</b> turns each row of scores into <b>attention weights</b>: take e<sup>score</sup> of every entry (always positive; −∞ gives 0), then divide by the row’s total. Each row now holds non-negative numbers that <b>add up to 1</b> (right column): how much of its attention token i gives to each token j.</p>
      <p>Bigger scores get disproportionately more weight, which is why the scaling step matters.</p>`,
  render(host, c) {
    renderSoftmax(host, {
      tokens: tokens(c),
      keyTokens: tokens(c),
      masked: stage(c, 'masked', c.head),
      weights: stage(c, 'weights', c.head),
      rowSums: c.derived.heads[c.head].rowSums,
      cell: c.cell,
      activeRow: c.beat > 0 ? c.beat - 1 : null,
    });
  },
};
