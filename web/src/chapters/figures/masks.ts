// §6: the causal mask, a padding mask and both combined by OR, as the engine's masked scores, and
// the weights with both (masked keys get exactly 0).
import { t } from '../../i18n';
import { divergingScale, maxAbs, sequentialScale } from '../../util/color';
import { cellFor, matrix } from './draw';
import { defineFigure } from './figure';

export const masksFigure = defineFigure({
  id: 'masks',
  controls: [],
  request: () => ({ figure: 'masks', T: 6, pad: 2, seed: 4 }),
  draw(host, d) {
    const T = d.causal.shape[0];
    const s = divergingScale(maxAbs(d.causal.data, d.padding.data));
    const c = cellFor(host, 2 * T, 40);
    matrix(host, 'mask-causal', t('ch.fig.masks.causal'), d.causal, s, { cell: c });
    matrix(host, 'mask-padding', t('ch.fig.masks.padding', { pad: 2 }), d.padding, s, { cell: c });
    matrix(host, 'mask-both', t('ch.fig.masks.both'), d.both, s, { cell: c });
    matrix(host, 'mask-weights', t('ch.fig.masks.weights'), d.weightsBoth, sequentialScale(1), { cell: c });
  },
});
