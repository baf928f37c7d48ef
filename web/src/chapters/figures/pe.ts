// §4: the sinusoidal table P the engine adds, and P·Pᵀ: nearby positions get similar vectors.
import { t } from '../../i18n';
import { divergingScale, maxAbs } from '../../util/color';
import { cellFor, matrix } from './draw';
import { defineFigure } from './figure';

export const peFigure = defineFigure({
  id: 'pe',
  controls: [],
  request: () => ({ figure: 'pe', T: 24, C: 16 }),
  draw(host, d) {
    const [T, C] = d.table.shape;
    matrix(host, 'pe-table', t('ch.fig.pe.table'), d.table, divergingScale(1), { cell: cellFor(host, C + T, 18) });
    matrix(host, 'pe-sim', t('ch.fig.pe.sim'), d.similarity, divergingScale(maxAbs(d.similarity.data)), { cell: cellFor(host, C + T, 18) });
  },
});
