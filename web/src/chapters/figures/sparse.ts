// §5: the scores a block-sparse layout and a sliding window with global tokens keep, out of n².
import { t } from '../../i18n';
import { sequentialScale } from '../../util/color';
import { cellFor, matrix } from './draw';
import { defineFigure } from './figure';

export const sparseFigure = defineFigure({
  id: 'sparse',
  controls: [],
  request: () => ({ figure: 'sparse', T: 24, blockSize: 4, windowBlocks: 1, globalBlocks: 1, randomBlocks: 1, window: 3, globalTokens: 2 }),
  draw(host, d) {
    const T = Math.sqrt(d.full);
    const b = T / d.blocks.shape[0];
    const nb = d.blocks.shape[0];
    const expanded = new Float32Array(T * T);
    for (let i = 0; i < T; i++) for (let j = 0; j < T; j++) expanded[i * T + j] = d.blocks.data[Math.floor(i / b) * nb + Math.floor(j / b)] ? 1 : -Infinity;
    matrix(host, 'sparse-blocks', t('ch.fig.sparse.blocks', { b, live: d.blockLive, full: d.full }), { shape: [T, T], data: expanded }, sequentialScale(1), { cell: cellFor(host, 2 * T, 12), digits: 0 });
    const win = new Float32Array(d.windowMask.data.length);
    d.windowMask.data.forEach((x, i) => (win[i] = Number.isFinite(x) ? 1 : -Infinity));
    matrix(host, 'sparse-window', t('ch.fig.sparse.window', { w: 3, g: 2, live: d.windowLive, full: d.full }), { shape: [T, T], data: win }, sequentialScale(1), { cell: cellFor(host, 2 * T, 12), digits: 0 });
  },
});
