import { renderEmbeddings } from '../components/embeddings_view';
import { permutedPair } from '../inputs';
import type { Step } from '../step';
import { stage, tokens } from './helpers';

export const embeddingsStep: Step = {
  id: 'embeddings',
  title: 'Embeddings (+ positions)',
  perHead: false,
  beats: (c) => c.input.tokens.length + 1,
  columns: (c) => (c.settings.positional === 'sinusoidal' ? 3 * c.derived.C + 2 : c.derived.C),
  caption: (c) => (c.beat > 0 ? `row ${c.beat - 1} is the vector of “${c.input.tokens[c.beat - 1]}”` : ''),
  explain: (c) => {
    const C = c.derived.C;
    let pos: string;
    if (c.settings.positional === 'sinusoidal')
      pos = `<p>Attention by itself has no idea of order, so a <b>position vector</b> P is added to each row: sines and cosines of different frequencies (fast in the first columns, slow in the last). The engine adds it; the result <b>x</b> is what attention reads.</p>`;
    else if (c.settings.positional === 'rope')
      pos = `<p>With <b>RoPE</b>, nothing is added here: position enters later, by <i>rotating</i> the query and key vectors by an angle that grows with the position.</p>`;
    else
      pos = `<p><b>No positions</b> are added. Try the examples “${permutedPair(c.settings.sentence).a}” and “${permutedPair(c.settings.sentence).b}”: the same rows, in a different order. Everything downstream will be the same numbers, just reordered, because attention alone cannot tell word order apart (it is <i>permutation-equivariant</i>).</p>`;
    return `<p>Each token becomes a list of ${C} numbers (d_model = ${C}): its <b>embedding</b>. A trained model learns these; here every word gets a fixed random vector from the seed, so the same word always has the same row.</p>${pos}`;
  },
  render(host, c) {
    renderEmbeddings(host, {
      tokens: tokens(c),
      embeddings: c.input.embeddings,
      positions: c.trace.positionTable,
      x: stage(c, 'x'),
      cell: c.cell,
      highlightRow: c.beat > 0 ? c.beat - 1 : null,
    });
  },
};
