// §6: in fp16 a naive softmax's exp overflows on scores above about 11 and leaves non-finite
// weights; the same softmax in fp32 does not.
import { t } from '../../i18n';
import { divergingScale, maxAbs, sequentialScale } from '../../util/color';
import { fmt } from '../../util/format';
import { cellFor, matrix } from './draw';
import { defineFigure } from './figure';

export const fp16Figure = defineFigure({
  id: 'fp16',
  controls: [{ name: 'size', label: 'ch.fig.fp16.magnitude', values: [1, 4, 16, 64], value: 16 }],
  request: (v) => ({ figure: 'fp16', T: 6, magnitude: Number(v('size')), seed: 9 }),
  draw(host, d) {
    const T = d.scaled.shape[0];
    const c = cellFor(host, 2 * T, 44);
    matrix(host, 'fp16-scaled', t('ch.fig.fp16.scaled', { max: fmt(d.maxScore, 1) }), d.scaled, divergingScale(maxAbs(d.scaled.data)), { cell: c, digits: 1 });
    matrix(host, 'fp16-naive', t('ch.fig.fp16.naive', { n: d.naiveNonFinite }), d.naive, sequentialScale(1), { cell: c });
    matrix(host, 'fp16-fixed', t('ch.fig.fp16.fixed', { n: d.fixedNonFinite }), d.fp32Softmax, sequentialScale(1), { cell: c });
    host.dataset.naiveNonFinite = String(d.naiveNonFinite);
  },
});
