import { t } from '../../i18n';
import { renderHeads } from '../components/heads_view';
import type { Step } from '../step';
import { tokens, keyTokens } from './helpers';

export const headsStep: Step = {
  id: 'heads',
  title: () => t('walk.step.heads.title'),
  perHead: false,
  beats: (c) => c.derived.H + 1,
  columns: (c) => c.derived.H * (c.derived.S + 1) + 3,
  caption: (c) => (c.beat > 0 ? t('walk.step.heads.caption', { h: c.beat - 1 }) : ''),
  explain: (c) => {
    const { H, Hkv, D, C } = c.derived;
    const m = c.trace.model;
    const weights = m?.pretrained ? t('walk.step.heads.pretrained', { layer: m.layer, name: m.pretrained.name }) : t('walk.step.heads.train');
    return t('walk.step.heads.explain', { H, D, C }) + (Hkv < H ? t(Hkv > 1 ? 'walk.step.heads.gqa' : 'walk.step.heads.gqaOne', { H, Hkv }) : '') + weights;
  },
  render(host, c) {
    const s = c.trace.stages.weights;
    renderHeads(host, { tokens: tokens(c), keyTokens: keyTokens(c), weights: s.heads, kvOf: c.derived.kvOf, cell: c.cell, shown: c.beat === 0 ? c.derived.H : c.beat });
  },
};
