import { renderHeads } from '../components/heads_view';
import type { Step } from '../step';
import { tokens } from './helpers';

export const headsStep: Step = {
  id: 'heads',
  title: 'All heads',
  perHead: false,
  beats: (c) => c.derived.H + 1,
  columns: (c) => c.derived.H * (c.derived.S + 1) + 3,
  caption: (c) => (c.beat > 0 ? `head ${c.beat - 1}` : ''),
  explain: (c) => {
    const { H, Hkv, D, C } = c.derived;
    return `<p>Everything so far happened <b>${H} times in parallel</b>, once per head, each with its own slice of ${D} of the ${C} columns. Each head can learn a different kind of relation (the next word, the subject of a verb, a matching bracket…). Costs stay the same as one big head: ${H} × ${D} = ${C}.</p>
      ${Hkv < H ? `<p>Here ${H} query heads share ${Hkv} key/value head${Hkv > 1 ? 's' : ''}: heads that read the same K/V can still attend differently, because their queries differ.</p>` : ''}
      <p>With random weights the maps look arbitrary; train a model in the <b>Training lab</b> and watch them sharpen.</p>`;
  },
  render(host, c) {
    const s = c.trace.stages.weights;
    renderHeads(host, { tokens: tokens(c), keyTokens: tokens(c), weights: s.heads, kvOf: c.derived.kvOf, cell: c.cell, shown: c.beat === 0 ? c.derived.H : c.beat });
  },
};
