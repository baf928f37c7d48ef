// §5: direct paths to distant tokens: a one-layer decoder trained in the worker on k_back (recall
// the token k back); each head's map, where the link k back is a bright off-diagonal.
import { t } from '../../i18n';
import type { Tensor } from '../../engine/protocol/messages';
import { sequentialScale } from '../../util/color';
import { cellFor, matrix, note } from './draw';
import { defineFigure } from './figure';

export const longrangeFigure = defineFigure({
  id: 'longrange',
  controls: [{ name: 'k', label: 'ch.fig.longrange.k', values: [8, 12], value: 8 }],
  trained: true,
  request: (v) => ({ figure: 'longrange', k: Number(v('k')), steps: 400, seed: 1 }),
  draw(host, d) {
    // The decoder's one layer, each head's (T, T) map: a copy of the token k back is a bright
    // off-diagonal k below the main one.
    const [, H, T] = d.maps.shape;
    note(host, t('ch.fig.longrange.result', { k: d.k, steps: d.steps, loss: d.loss.toFixed(3), acc: (100 * d.accuracy).toFixed(1) }), { accuracy: d.accuracy });
    const labels = d.tokens.map(String);
    for (let h = 0; h < H; h++) {
      const map: Tensor = { shape: [T, T], data: d.maps.data.slice(h * T * T, (h + 1) * T * T) };
      for (let i = 0; i < T; i++) for (let j = i + 1; j < T; j++) map.data[i * T + j] = -Infinity;
      let onLink = 0;
      for (let i = d.k; i < T; i++) onLink += map.data[i * T + i - d.k];
      matrix(host, `longrange-h${h}`, t('ch.fig.longrange.title', { h, k: d.k, w: (onLink / (T - d.k)).toFixed(2) }), map, sequentialScale(1), { cell: cellFor(host, T, 22), rowLabels: labels, colLabels: labels });
    }
  },
});
