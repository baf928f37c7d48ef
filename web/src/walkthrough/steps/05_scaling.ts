import { t } from '../../i18n';
import { renderScaling } from '../components/scaling_view';
import { bins, symmetricDomain } from '../layout';
import type { Step } from '../step';
import { stage, tokens, keyTokens } from './helpers';

export const scalingStep: Step = {
  id: 'scaling',
  title: () => t('walk.step.scaling.title'),
  perHead: true,
  beats: () => 1,
  columns: (c) => (c.scaledOn ? 3 : 2) * c.derived.S + 6,
  caption: () => '',
  explain: (c) => {
    const D = c.derived.D;
    const h = c.derived.heads[c.head];
    const mean = (a: number[]) => a.reduce((x, y) => x + y, 0) / a.length;
    const on = c.settings.scale;
    const p = { D, factor: (1 / Math.sqrt(D)).toPrecision(4), max: c.derived.maxEntropy.toFixed(2), head: c.head, unscaled: mean(h.entropyUnscaled).toFixed(3), scaled: mean(h.entropyScaled).toFixed(3) };
    return t('walk.step.scaling.why') + t(on ? 'walk.step.scaling.factorOn' : 'walk.step.scaling.factorOff', p) + t(on ? 'walk.step.scaling.entropyOn' : 'walk.step.scaling.entropyOff', p);
  },
  render(host, c) {
    const d = c.derived;
    const domain = symmetricDomain(d.scoreValues.unscaled, d.scoreValues.scaled);
    const h = d.heads[c.head];
    const T = d.T;
    const entropy = new Float32Array(T * 2);
    for (let i = 0; i < T; i++) {
      entropy[2 * i] = h.entropyUnscaled[i];
      entropy[2 * i + 1] = h.entropyScaled[i];
    }
    renderScaling(host, {
      tokens: tokens(c),
      keyTokens: keyTokens(c),
      scores: stage(c, 'scores', c.head),
      scaled: stage(c, 'scaled', c.head),
      factorLabel: c.settings.scale ? `1/√${d.D}` : '1',
      cell: c.cell,
      hist: {
        domain,
        series: [
          { label: t('walk.step.scaling.seriesUnscaled'), color: '#e08214', bins: bins(d.scoreValues.unscaled, domain) },
          { label: t(c.settings.scale ? 'walk.step.scaling.seriesScaled' : 'walk.step.scaling.seriesScaledIf', { D: d.D }), color: '#542788', bins: bins(d.scoreValues.scaled, domain) },
        ],
      },
      entropy: { shape: [T, 2], data: entropy },
      entropyLabels: [t('walk.step.scaling.colUnscaled'), t(c.scaledOn ? 'walk.step.scaling.colScaledIf' : 'walk.step.scaling.colScaled')],
      wouldBe: c.scaledOn ? { scaled: c.scaledOn.scaled.heads[c.head], factorLabel: `1/√${d.D}` } : null,
      maxEntropy: d.maxEntropy,
    });
  },
};
