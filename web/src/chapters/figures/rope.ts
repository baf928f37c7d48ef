// §4: RoPE's q_m·k_n for one vector at every position depends only on m − n: each diagonal of the
// engine's scores is constant (its largest spread is shown).
import { t } from '../../i18n';
import { divergingScale, maxAbs } from '../../util/color';
import { cellFor, matrix, note, range } from './draw';
import { defineFigure } from './figure';

export const ropeFigure = defineFigure({
  id: 'rope',
  controls: [],
  request: () => ({ figure: 'rope', T: 10, C: 8, seed: 2 }),
  draw(host, d) {
    const T = d.scores.shape[0];
    matrix(host, 'rope-scores', t('ch.fig.rope.title'), d.scores, divergingScale(maxAbs(d.scores.data)), { cell: cellFor(host, T, 34), rowLabels: range(T, (i) => `m=${i}`), colLabels: range(T, (i) => `n=${i}`) });
    note(host, t('ch.fig.rope.note', { v: d.diagonalSpread.toExponential(2) }), { spread: d.diagonalSpread });
  },
});
