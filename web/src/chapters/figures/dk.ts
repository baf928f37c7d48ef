// §2: the scores' spread with and without 1/√d_k as d_k grows: a histogram of both, the softmax's
// entropy and gradient norm of each, and the weights they give.
import { t } from '../../i18n';
import type { Tensor } from '../../engine/protocol/messages';
import { renderHistogram } from '../../ui/histogram';
import { HEAD_COLORS, maxAbs, sequentialScale } from '../../util/color';
import { fmt } from '../../util/format';
import { cellFor, figureExport, matrix, range } from './draw';
import { defineFigure } from './figure';

export const dkFigure = defineFigure({
  id: 'dk',
  controls: [{ name: 'dk', label: 'ch.fig.dk.slider', values: [4, 16, 64, 128, 256, 512], value: 64 }],
  request: (v) => ({ figure: 'dk', dk: Number(v('dk')), T: 12, seed: 7 }),
  draw(host, d) {
    const bins = (s: Tensor, lo: number, hi: number) => {
      const n = 24;
      const out = range(n).map((_, i) => ({ x0: lo + ((hi - lo) * i) / n, x1: lo + ((hi - lo) * (i + 1)) / n, count: 0 }));
      for (const v of s.data) out[Math.min(n - 1, Math.max(0, Math.floor(((v - lo) / (hi - lo)) * n)))].count++;
      return out;
    };
    const m = Math.max(1, maxAbs(d.unscaledScores.data, d.scaledScores.data));
    // The histogram with its numbers under it, then the two weight matrices side by side: two
    // blocks of about the same height, so neither leaves an empty band beside the other.
    const column = document.createElement('div');
    column.className = 'fig-column';
    host.appendChild(column);
    const cell = document.createElement('div');
    cell.className = 'fig-cell';
    column.appendChild(cell);
    renderHistogram(cell, 'dk', `${t('ch.fig.dk.title', { dk: d.dk })} — ${t('ch.fig.dk.hist')}`, [
      { label: t('ch.fig.dk.unscaled'), color: HEAD_COLORS[2], bins: bins(d.unscaledScores, -m, m) },
      { label: t('ch.fig.dk.scaled'), color: HEAD_COLORS[0], bins: bins(d.scaledScores, -m, m) },
    ], [-m, m], Math.min(420, Math.max(280, host.clientWidth - 20)), 170);
    figureExport(cell, cell.querySelector<SVGSVGElement>('svg')!, 'attnlab-dk-hist');
    const tb = document.createElement('table');
    tb.className = 'fig-stats';
    tb.dataset.stats = 'dk';
    const row = (k: keyof typeof d.stats) => `<tr data-row="${k}"><th>${t(k === 'scaled' ? 'ch.fig.dk.scaled' : 'ch.fig.dk.unscaled')}</th><td data-v="scoreStd">${fmt(d.stats[k].scoreStd)}</td><td data-v="entropy">${fmt(d.stats[k].entropy)}</td><td data-v="gradNorm">${d.stats[k].gradNorm.toExponential(2)}</td></tr>`;
    tb.innerHTML = `<thead><tr><th></th><th>${t('ch.fig.dk.std')}</th><th>${t('ch.fig.dk.entropy')}</th><th>${t('ch.fig.dk.grad')}</th></tr></thead><tbody>${row('scaled')}${row('unscaled')}</tbody>`;
    column.appendChild(tb);
    const T = d.scaledWeights.shape[0];
    const size = cellFor(host, 2 * T, 26);
    const pair = document.createElement('div');
    pair.className = 'fig-pair';
    host.appendChild(pair);
    matrix(pair, 'dk-weights-scaled', t('ch.fig.dk.weightsScaled'), d.scaledWeights, sequentialScale(1), { cell: size });
    matrix(pair, 'dk-weights-unscaled', t('ch.fig.dk.weightsUnscaled'), d.unscaledWeights, sequentialScale(1), { cell: size });
  },
});
