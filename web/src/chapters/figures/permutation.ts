// §4: attention without positions is permutation-equivariant: f(πx) = π f(x) for "I love you" →
// "you love I" (我爱你 → 你爱我 on the Chinese page); a positional encoding makes the order matter.
import { t } from '../../i18n';
import type { PermutationRequest } from './permutation.compute';
import { divergingScale, maxAbs } from '../../util/color';
import { cellFor, matrix, note } from './draw';
import { defineFigure } from './figure';

export const permutationFigure = defineFigure({
  id: 'permutation',
  controls: [{ name: 'pos', label: 'ch.fig.permutation.pos', values: ['none', 'sinusoidal', 'rope'], value: 'none' }],
  request: (v) => ({ figure: 'permutation', T: 3, C: 8, seed: 11, perm: [2, 1, 0], positional: v('pos') as PermutationRequest['positional'] }),
  draw(host, d, v) {
    const scale = divergingScale(maxAbs(d.permutedY.data, d.yOfPermuted.data));
    // The tokens in the page's language ("I|love|you", "我|爱|你"), in the permuted order.
    const tokens = t('ch.fig.permutation.tokens').split('|');
    const words = [2, 1, 0].map((i) => tokens[i]);
    const C = d.y.shape[1];
    note(host, t('ch.fig.permutation.title', { perm: t('ch.fig.permutation.sentences') }));
    matrix(host, 'perm-y', t('ch.fig.permutation.y'), d.permutedY, scale, { rowLabels: words, cell: cellFor(host, 2 * C, 30) });
    matrix(host, 'perm-yp', t('ch.fig.permutation.yp'), d.yOfPermuted, scale, { rowLabels: words, cell: cellFor(host, 2 * C, 30) });
    const equal = d.maxDiff < 1e-5;
    note(host, `${t('ch.maxDiff', { v: d.maxDiff.toExponential(2) })} (${v('pos')}) — ${t(equal ? 'ch.fig.permutation.equal' : 'ch.fig.permutation.differ')}`, { maxDiff: d.maxDiff });
  },
});
