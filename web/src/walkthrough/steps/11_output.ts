import { renderOutput } from '../components/output_view';
import { col, dotTerms, row, transpose } from '../derive';
import { permutedPair } from '../inputs';
import type { Step } from '../step';
import { stage, tokens } from './helpers';

export const outputStep: Step = {
  id: 'output',
  title: 'Output projection W_O',
  perHead: false,
  beats: (c) => c.derived.T + 1,
  columns: (c) => 3 * c.derived.C + 2,
  caption: (c) => (c.beat > 0 ? `output row ${c.beat - 1} (“${c.input.tokens[c.beat - 1]}”)` : ''),
  explain: (c) => {
    const { a, b } = permutedPair(c.settings.sentence);
    return `<p>A last weight matrix <b>W_O</b> mixes the heads’ findings into one vector per token, of the original width ${c.derived.C}. This is the layer’s output: each token’s vector, now informed by the tokens it attended to. A Transformer stacks many such layers (with a small feed-forward network after each).</p>
      ${c.settings.positional === 'none' ? `<p>Try it: compare “${a}” with “${b}”. Without positions, the output rows are the same numbers, only in the new order. Switch positions to sinusoidal or RoPE and they change.</p>` : `<p>With positions, reordering the tokens changes the numbers, not just their order: the model can tell “${a}” from “${b}”.</p>`}`;
  },
  render(host, c) {
    const concat = stage(c, 'concat');
    const wo = c.trace.parameters['out_proj.weight'];
    const bo = c.trace.parameters['out_proj.bias'];
    const woT = transpose(wo);
    renderOutput(host, {
      tokens: tokens(c),
      concat,
      woT,
      output: stage(c, 'output'),
      cell: c.cell,
      activeRow: c.beat > 0 ? c.beat - 1 : null,
      terms: (i, j) => ({ ...dotTerms(row(concat, i), col(woT, j)), bias: bo ? bo.data[j] : 0 }),
    });
  },
};
