import { renderProjections, type ProjectionRow } from '../components/projection_view';
import { col, dotTerms, row } from '../derive';
import type { Step, StepContext } from '../step';
import { headLabel, kvHead, stage, tokens, weightSlice } from './helpers';

function rows(c: StepContext): ProjectionRow[] {
  const x = stage(c, 'x');
  const specs: [string, 'q_proj' | 'k_proj' | 'v_proj', string, number, boolean][] = [
    ['q', 'q_proj', 'W_Q', c.head, false],
    ['k', 'k_proj', 'W_K', kvHead(c), true],
    ['v', 'v_proj', 'W_V', kvHead(c), true],
  ];
  return specs.map(([which, proj, weightName, h, kv]) => {
    const { wT, bias } = weightSlice(c, proj, h);
    return {
      which,
      weightName,
      weightT: wT,
      out: stage(c, which, h),
      headLabel: headLabel(c, kv),
      terms: (i: number, j: number) => ({ ...dotTerms(row(x, i), col(wT, j)), bias: bias ? bias[j] : 0 }),
    };
  });
}

export const projectionsStep: Step = {
  id: 'projections',
  title: 'Queries, keys, values',
  perHead: true,
  beats: (c) => c.derived.T * c.derived.D + 1,
  columns: (c) => c.derived.C + 2 * c.derived.D + 6,
  caption: (c) => {
    if (c.beat === 0) return '';
    const D = c.derived.D;
    const i = Math.floor((c.beat - 1) / D);
    const j = (c.beat - 1) % D;
    return `q[${i}][${j}] = row ${i} of x (“${c.input.tokens[i]}”) · column ${j} of W_Qᵀ`;
  },
  explain: (c) => {
    const { C, D, H, Hkv } = c.derived;
    return `<p>Every token asks a question and offers an answer. Three different weight matrices turn each row of x into three new vectors:</p>
     <ul><li><b>query q</b> — what this token is looking for,</li><li><b>key k</b> — what this token can be found by,</li><li><b>value v</b> — what this token hands over when it is chosen.</li></ul>
     <p>Each number is a <b>row × column</b> product: multiply the ${C} numbers of a row of x by the ${C} numbers of a column of Wᵀ, pairwise, and add them up. Hover any cell of q, k or v to see the ${C} products.</p>
     <p>${H > 1 ? `There are ${H} heads; each uses its own ${D} columns (d_k = d_model / heads = ${C} / ${H} = ${D}). You see head ${c.head}.` : `With one head, d_k = d_model = ${C}.`}${Hkv < H ? ` With ${Hkv} key/value head${Hkv > 1 ? 's' : ''} (grouped-query attention), several query heads share the same k and v: fewer numbers to store when generating text.` : ''}</p>
     <p>${c.trace.model ? `These are the weights of layer ${c.trace.model.layer} of the model trained in the lab (the ${c.trace.model.task} task); x is that layer's input, the hidden state the layers below produced.` : `The weights here are random (seed ${c.settings.seed}): a trained model would have learned them.`}</p>`;
  },
  render(host, c) {
    const D = c.derived.D;
    const animating = c.beat > 0;
    const k = c.beat - 1;
    renderProjections(host, {
      tokens: tokens(c),
      x: stage(c, 'x'),
      rows: rows(c),
      cell: c.cell,
      active: animating ? { row: 0, i: Math.floor(k / D), j: k % D } : null,
      computed: animating ? k : Infinity,
    });
  },
};
