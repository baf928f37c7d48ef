// The lab's training-dynamics curves beside loss and accuracy: the global gradient norm, the
// largest attention score, and each head's mean attention entropy, all as the engine's Trainer
// reports them per step (StepMetrics). Draws on the same x-axis as the loss (charts.ts links them).
import type { LabSettings, StepMetrics } from '../engine/protocol/lab';
import { t as tr } from '../i18n';
import { HEAD_COLORS } from '../util/color';
import { renderSeries, type CurveSeries } from './charts';

/** Series of per-head entropy, one per (layer, head), labelled "L0 H1". */
export function entropySeries(metrics: StepMetrics[], settings: Pick<LabSettings, 'layers' | 'heads'>): CurveSeries[] {
  const n = metrics.length ? (metrics[metrics.length - 1].headEntropy?.length ?? 0) : 0;
  const H = settings.heads > 0 && n % settings.heads === 0 ? settings.heads : n;
  return Array.from({ length: n }, (_, k) => ({
    label: `L${Math.floor(k / H)} H${k % H}`,
    color: HEAD_COLORS[k % HEAD_COLORS.length],
    dashed: Math.floor(k / H) % 2 === 1,
    points: metrics.map((m) => ({ step: m.step, value: m.headEntropy?.[k] ?? NaN })),
  }));
}

export function renderTrainingCurves(host: HTMLElement, metrics: StepMetrics[], settings: LabSettings, total: number) {
  // An LSTM has no attention; a forecaster's trainer reports no attention statistics (headEntropy empty).
  const lstm = settings.architecture === 'lstm' || (metrics.length > 0 && !metrics.some((m) => m.headEntropy?.length));
  renderSeries(host, 'grad-norm', tr('lab.curve.gradNorm'), [{ label: tr('lab.curve.gradNorm'), color: '#1b7837', points: metrics.map((m) => ({ step: m.step, value: m.gradNorm })) }], total, { log: true });
  if (lstm) {
    host.querySelectorAll('figure[data-curve="max-score"], figure[data-curve="entropy"]').forEach((f) => f.remove());
    return;
  }
  renderSeries(host, 'max-score', tr('lab.curve.maxScore'), [{ label: tr('lab.curve.maxScore'), color: '#b2182b', points: metrics.map((m) => ({ step: m.step, value: m.maxScore })) }], total, {});
  renderSeries(host, 'entropy', tr('lab.curve.entropy'), entropySeries(metrics, settings), total, {});
}
