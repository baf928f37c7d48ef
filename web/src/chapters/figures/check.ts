// §8: a hand-written layer is trusted once it matches a reference: the engine's stages beside the
// textbook formulas in plain JavaScript, with the largest difference of each.
import { t } from '../../i18n';
import { divergingScale, maxAbs } from '../../util/color';
import { cellFor, matrix } from './draw';
import { defineFigure } from './figure';

export const checkFigure = defineFigure({
  id: 'check',
  controls: [],
  request: () => ({ figure: 'check', T: 4, C: 8, H: 2, seed: 12 }),
  draw(host, d) {
    const tb = document.createElement('table');
    tb.className = 'fig-stats';
    tb.dataset.stats = 'check';
    tb.innerHTML = `<tbody>${d.stages.map((s) => `<tr data-stage="${s.name}"><th>${s.name}</th><td data-max-diff="${s.maxDiff}">${t('ch.maxDiff', { v: s.maxDiff.toExponential(2) })}</td></tr>`).join('')}</tbody>`;
    host.appendChild(tb);
    const out = d.stages.find((s) => s.name === 'output')!;
    const scale = divergingScale(maxAbs(out.engine.data));
    const c = cellFor(host, 2 * out.engine.shape[1], 40);
    matrix(host, 'check-engine', `${t('ch.fig.check.title', { name: 'output' })} — engine`, out.engine, scale, { cell: c });
    matrix(host, 'check-plain', `${t('ch.fig.check.title', { name: 'output' })} — JavaScript`, out.plain, scale, { cell: c });
  },
});
