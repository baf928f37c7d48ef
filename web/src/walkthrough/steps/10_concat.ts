import { renderConcat } from '../components/concat_view';
import type { Step } from '../step';
import { stage, tokens } from './helpers';

export const concatStep: Step = {
  id: 'concat',
  title: 'Concatenate heads',
  perHead: false,
  beats: () => 2,
  columns: (c) => c.derived.C + 3,
  caption: (c) => (c.beat === 1 ? 'the heads slide together, side by side' : ''),
  explain: (c) => {
    const { H, D, C, T } = c.derived;
    return `<p>The ${H} head outputs, each ${T} × ${D}, are placed <b>side by side</b> to give one ${T} × ${C} matrix again: columns 0…${D - 1} come from head 0, and so on (the coloured strip).</p>
      <p>In code this is a reshape and a transpose: (T, H, D) ↔ (H, T, D). Doing them in the wrong order still runs, but silently scrambles numbers between heads — a classic bug.</p>`;
  },
  render(host, c) {
    renderConcat(host, { tokens: tokens(c), contexts: c.trace.stages.context.heads, concat: stage(c, 'concat'), cell: c.cell, joined: c.beat !== 0 ? c.beat >= 1 : true });
  },
};
