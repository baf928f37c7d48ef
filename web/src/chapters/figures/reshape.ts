// §3: splitting into heads is a reshape and a transpose; reshaping straight to (H, T, D) runs
// without an error but hands each head numbers from several tokens. Both, on the engine's own q.
import { t } from '../../i18n';
import { divergingScale, HEAD_COLORS, maxAbs } from '../../util/color';
import { cellFor, matrix, range } from './draw';
import { defineFigure } from './figure';

export const reshapeFigure = defineFigure({
  id: 'reshape',
  controls: [],
  request: () => ({ figure: 'reshape', T: 4, C: 8, H: 2, seed: 5 }),
  draw(host, d) {
    const [T, C] = d.q.shape;
    const H = d.right.length;
    const D = C / H;
    const scale = divergingScale(maxAbs(d.q.data));
    const tok = range(T, (i) => `t${i}`);
    matrix(host, 'reshape-q', t('ch.fig.reshape.q'), d.q, scale, { rowLabels: tok, colBands: range(C, (j) => HEAD_COLORS[Math.floor(j / D)]), cell: cellFor(host, C, 40) });
    for (let h = 0; h < H; h++) matrix(host, `reshape-right-${h}`, t('ch.fig.reshape.right', { h }), d.right[h], scale, { rowLabels: tok, cell: cellFor(host, 2 * D, 40) });
    for (let h = 0; h < H; h++) {
      matrix(host, `reshape-wrong-${h}`, `${t('ch.fig.reshape.wrong', { h })} — ${t('ch.fig.reshape.rows', { tokens: d.wrongTokens[h].map((x) => `t${x}`).join(', ') })}`, d.wrong[h], scale, { rowLabels: range(T, (i) => `t${d.wrongTokens[h][i]}`), cell: cellFor(host, 2 * D, 40) });
    }
  },
});
