import { renderScaling } from '../components/scaling_view';
import { bins, symmetricDomain } from '../layout';
import type { Step } from '../step';
import { stage, tokens } from './helpers';

export const scalingStep: Step = {
  id: 'scaling',
  title: 'Scaling by 1/√d_k',
  perHead: true,
  beats: () => 1,
  columns: (c) => (c.scaledOn ? 3 : 2) * c.derived.S + 6,
  caption: () => '',
  explain: (c) => {
    const D = c.derived.D;
    const h = c.derived.heads[c.head];
    const mean = (a: number[]) => a.reduce((x, y) => x + y, 0) / a.length;
    const on = c.settings.scale;
    return `<p>A dot product of two random vectors of length d_k adds up d_k products, so its spread grows like √d_k. Large scores make the next step (softmax) put almost all weight on one token; it then barely changes when the weights change, and learning stalls.</p>
      <p>So the scores are multiplied by <b>1/√d_k</b>. Here d_k = ${D}, so the factor is ${on ? `1/√${D} = ${(1 / Math.sqrt(D)).toPrecision(4)}` : `1 (<b>scaling is switched off</b>). On the right, the engine’s scores for the same weights with scaling on (× 1/√${D}), for comparison`}.</p>
      <p>The histogram shows all heads’ scores without (orange) and with (purple) the factor; the table shows the <b>entropy</b> of each row after softmax: 0 means all attention on one token, ln S = ${c.derived.maxEntropy.toFixed(2)} means spread evenly. Mean entropy for head ${c.head}: ${mean(h.entropyUnscaled).toFixed(3)} unscaled, ${mean(h.entropyScaled).toFixed(3)} scaled${on ? '' : ' (if scaling were on)'}. Try d_model = 64 with 1 head to see saturation.</p>`;
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
      keyTokens: tokens(c),
      scores: stage(c, 'scores', c.head),
      scaled: stage(c, 'scaled', c.head),
      factorLabel: c.settings.scale ? `1/√${d.D}` : '1',
      cell: c.cell,
      hist: {
        domain,
        series: [
          { label: 'scores (unscaled)', color: '#e08214', bins: bins(d.scoreValues.unscaled, domain) },
          { label: c.settings.scale ? `scaled (× 1/√${d.D})` : `scaled if on (× 1/√${d.D})`, color: '#542788', bins: bins(d.scoreValues.scaled, domain) },
        ],
      },
      entropy: { shape: [T, 2], data: entropy },
      entropyLabels: ['unscaled', c.scaledOn ? 'scaled if on' : 'scaled'],
      wouldBe: c.scaledOn ? { scaled: c.scaledOn.scaled.heads[c.head], factorLabel: `1/√${d.D}` } : null,
      maxEntropy: d.maxEntropy,
    });
  },
};
