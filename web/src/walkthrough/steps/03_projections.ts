import { t } from '../../i18n';
import { renderProjections, type ProjectionRow } from '../components/projection_view';
import { col, dotTerms, row } from '../derive';
import type { Step, StepContext } from '../step';
import { taskLabel } from '../../lab/settings';
import { headLabel, keyTokens, kvHead, sourceTag, stage, tokens, weightSlice } from './helpers';

function rows(c: StepContext): ProjectionRow[] {
  const x = stage(c, 'x');
  const specs: [string, 'q_proj' | 'k_proj' | 'v_proj', string, number, boolean][] = [
    ['q', 'q_proj', 'W_Q', c.head, false],
    ['k', 'k_proj', 'W_K', kvHead(c), true],
    ['v', 'v_proj', 'W_V', kvHead(c), true],
  ];
  const context = c.input.context;
  return specs.map(([which, proj, weightName, h, kv]) => {
    const { wT, bias } = weightSlice(c, proj, h);
    // Cross-attention: k and v are projections of the context, not of x.
    const input = kv && context ? context.embeddings : x;
    return {
      which,
      weightName,
      weightT: wT,
      out: stage(c, which, h),
      headLabel: headLabel(c, kv) + sourceTag(c, kv ? 'context' : 'query'),
      ...(kv && context ? { input, inputName: t('walk.cross.context'), inputTokens: keyTokens(c), rowsName: 'S' } : {}),
      terms: (i: number, j: number) => ({ ...dotTerms(row(input, i), col(wT, j)), bias: bias ? bias[j] : 0 }),
    };
  });
}

/** Where the weights come from: an opened checkpoint, the lab's model, or the seed. */
function origin(c: StepContext): string {
  const m = c.trace.model;
  if (m?.pretrained) return t('walk.step.projections.pretrained', { layer: m.layer, name: m.pretrained.name });
  if (m?.task) return t('walk.step.projections.trained', { layer: m.layer, task: taskLabel(m.task) });
  return t('walk.step.projections.random', { seed: c.settings.seed });
}

export const projectionsStep: Step = {
  id: 'projections',
  title: () => t('walk.step.projections.title'),
  perHead: true,
  beats: (c) => c.derived.T * c.derived.D + 1,
  columns: (c) => c.derived.C + 2 * c.derived.D + 6,
  caption: (c) => {
    if (c.beat === 0) return '';
    const D = c.derived.D;
    const i = Math.floor((c.beat - 1) / D);
    const j = (c.beat - 1) % D;
    return t('walk.step.projections.caption', { i, j, token: c.input.tokens[i] });
  },
  explain: (c) => {
    const { C, D, H, Hkv } = c.derived;
    return (
      t('walk.step.projections.explain', { C }) +
      `<p>${H > 1 ? t('walk.step.projections.heads', { H, D, C, head: c.head }) : t('walk.step.projections.oneHead', { C })}${Hkv < H ? ' ' + t(Hkv > 1 ? 'walk.step.projections.gqa' : 'walk.step.projections.gqaOne', { Hkv }) : ''}</p>` +
      `<p>${origin(c)}</p>`
    );
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
