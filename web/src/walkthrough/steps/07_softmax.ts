import type { Normalizer } from '../../../attnlab';
import { CHOICES } from '../../../generated/choices.mjs';
import type { Tensor } from '../../engine/protocol/messages';
import { t } from '../../i18n';
import { renderNormalizers } from '../components/normalizers_view';
import { renderSoftmax } from '../components/softmax_view';
import { renderVariants } from '../components/variants_view';
import type { Step } from '../step';
import { kvHead, stage, tokens, keyTokens } from './helpers';

export const softmaxStep: Step = {
  id: 'softmax',
  title: () => t('walk.step.softmax.title'),
  perHead: true,
  beats: (c) => c.derived.T + 1,
  // The normaliser row (one matrix per normaliser) and the variant row (random weights only) are
  // wider than masked → weights.
  columns: (c) => (c.trace.normalizerWeights ? Math.max(CHOICES.Normalizer.length * c.derived.S + 6, 2 * c.derived.D + 2 * c.derived.S + 4) : 2 * c.derived.S + 6),
  caption: (c) => (c.beat > 0 ? t('walk.step.softmax.caption', { i: c.beat - 1 }) : ''),
  explain: () => t('walk.step.softmax.explain'),
  render(host, c) {
    renderSoftmax(host, {
      tokens: tokens(c),
      keyTokens: keyTokens(c),
      masked: stage(c, 'masked', c.head),
      weights: stage(c, 'weights', c.head),
      rowSums: c.derived.heads[c.head].rowSums,
      cell: c.cell,
      activeRow: c.beat > 0 ? c.beat - 1 : null,
    });
    const nw = c.trace.normalizerWeights;
    if (nw) {
      const masked = stage(c, 'masked', c.head);
      const S = masked.shape[1];
      renderNormalizers(host, {
        tokens: tokens(c),
        keyTokens: keyTokens(c),
        weights: Object.fromEntries(CHOICES.Normalizer.map((n) => [n, nw[n].heads[c.head]])) as Record<Normalizer, Tensor>,
        current: c.settings.normalizer ?? 'softmax',
        masked: (i, j) => masked.data[i * S + j] === -Infinity,
        cell: c.cell,
      });
    }
    const v = c.trace.variants;
    if (v) {
      const h = c.head;
      const kv = kvHead(c);
      renderVariants(host, {
        tokens: tokens(c),
        keyTokens: keyTokens(c),
        softmax: nw ? nw.softmax.heads[h] : stage(c, 'weights', h),
        linear: v.linear ? { phiQ: v.linear.phiQ.heads[h], phiK: v.linear.phiK.heads[kv], weights: v.linear.weights.heads[h] } : null,
        blockSparse: v.blockSparse ? { blockSize: v.blockSparse.blockSize, masked: v.blockSparse.masked.heads[h], weights: v.blockSparse.weights.heads[h] } : null,
        cell: c.cell,
      });
    }
  },
};
