// §6: FlashAttention never stores the n × n matrix: over key tiles it keeps a running max and sum
// per row, and its weights equal the engine's full softmax.
import { t } from '../../i18n';
import { divergingScale, maxAbs, sequentialScale } from '../../util/color';
import { cellFor, matrix, note, range } from './draw';
import { defineFigure } from './figure';

export const flashFigure = defineFigure({
  id: 'flash',
  controls: [{ name: 'tile', label: 'ch.fig.flash.tile', values: [2, 4, 8], value: 4 }],
  request: (v) => ({ figure: 'flash', T: 8, tile: Number(v('tile')), seed: 6 }),
  draw(host, d) {
    const T = d.scaled.shape[0];
    const c = cellFor(host, 2 * T, 36);
    const tiles = range(d.runningMax.shape[1], (b) => `≤${Math.min(T, (b + 1) * d.tile) - 1}`);
    matrix(host, 'flash-max', t('ch.fig.flash.max'), d.runningMax, divergingScale(maxAbs(d.runningMax.data)), { cell: c, colLabels: tiles });
    matrix(host, 'flash-sum', t('ch.fig.flash.sum'), d.runningSum, sequentialScale(Math.max(...d.runningSum.data)), { cell: c, colLabels: tiles });
    matrix(host, 'flash-tiled', t('ch.fig.flash.tiled'), d.tiled, sequentialScale(1), { cell: c });
    matrix(host, 'flash-full', t('ch.fig.flash.full'), d.weights, sequentialScale(1), { cell: c });
    note(host, t('ch.maxDiff', { v: d.maxDiff.toExponential(2) }), { maxDiff: d.maxDiff });
  },
});
