// The lab's curves: loss and accuracy (a forecaster's MSE and MAE, each beside the seasonal-naive
// baseline), and the training dynamics beside them: the global gradient norm, the largest
// attention score, and each head's mean attention entropy, all as the engine's Trainer reports
// them per step (StepMetrics), on one x-axis (charts.ts links them).
import type { LabSettings, StepMetrics } from '../engine/protocol/lab';
import { t as tr } from '../i18n';
import { lineStyle } from '../ui/line_chart';
import { renderCurve, renderSeries, type CurveSeries } from './charts';

/** Every curve of the run: `settings` are the held model's (or the form's before there is one), `total` its last step. */
export function renderCurves(curves: HTMLElement, metrics: StepMetrics[], settings: LabSettings, total: number) {
  const loss = metrics.map((m) => ({ step: m.step, value: m.loss }));
  const acc = metrics.map((m) => ({ step: m.step, value: m.accuracy }));
  if (settings.task === 'series') {
    // A forecaster reports MSE (its loss) and MAE, each beside the seasonal-naive baseline on the same batch.
    const baseline = (f: (m: StepMetrics) => number | undefined) => ({ label: tr('lab.baseline'), color: '#8c8c8c', dashed: true, points: metrics.map((m) => ({ step: m.step, value: f(m) ?? NaN })) });
    curves.querySelector('figure[data-curve="accuracy"]')?.remove();
    renderSeries(curves, 'loss', tr('lab.mse'), [{ label: tr('lab.mse'), color: '#542788', points: loss }, baseline((m) => m.baselineMse)], total, { log: true });
    renderSeries(curves, 'mae', tr('lab.mae'), [{ label: tr('lab.mae'), color: '#e08214', points: metrics.map((m) => ({ step: m.step, value: m.mae ?? NaN })) }, baseline((m) => m.baselineMae)], total, {});
  } else {
    curves.querySelector('figure[data-curve="mae"]')?.remove();
    renderCurve(curves, 'loss', tr('lab.loss'), loss, total, { log: true, color: '#542788' });
    renderCurve(curves, 'accuracy', tr('lab.accuracy'), acc, total, { max: 1, color: '#e08214' });
  }
  renderTrainingCurves(curves, metrics, settings, total);
}

/** Series of per-head entropy, one per (layer, head), labelled "L0 H1". */
export function entropySeries(metrics: StepMetrics[], settings: Pick<LabSettings, 'layers' | 'heads'>): CurveSeries[] {
  const n = metrics.length ? (metrics[metrics.length - 1].headEntropy?.length ?? 0) : 0;
  const H = settings.heads > 0 && n % settings.heads === 0 ? settings.heads : n;
  return Array.from({ length: n }, (_, k) => ({
    label: `L${Math.floor(k / H)} H${k % H}`,
    // One colour and dash per (layer, head): up to 8 colours × 4 dashes, no two alike.
    color: lineStyle(k).color,
    dash: lineStyle(k).dash,
    points: metrics.map((m) => ({ step: m.step, value: m.headEntropy?.[k] ?? NaN })),
  }));
}

function renderTrainingCurves(host: HTMLElement, metrics: StepMetrics[], settings: LabSettings, total: number) {
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
