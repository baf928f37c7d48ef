// §7: a Transformer forecaster (sinusoidal or time-aware positions) trained on the series task; its
// forecast of a held-out series beside the truth and the seasonal-naive baseline.
import type { AttnLab, ModelConfig } from '../../../attnlab';
import { owning, train, type Progress } from './training.compute';

export interface ForecastRequest { figure: 'forecast'; positional: ModelConfig['positional']; steps: number; seed: number }
export interface ForecastFigure {
  figure: 'forecast';
  positional: ModelConfig['positional'];
  steps: number;
  /** Training MSE of the last chunk; held-out MSE and MAE of the model and of the seasonal-naive baseline (trainer.evaluate). */
  loss: number;
  mse: number;
  mae: number;
  baselineMse: number;
  baselineMae: number;
  /** The held-out series: its T context values, then over the horizon the truth, model.forecast and the seasonal-naive baseline. */
  context: number[];
  truth: number[];
  forecast: number[];
  baseline: number[];
}

/**
 * The forecaster of the figure: a one-block Transformer with the sinusoidal or the time-aware
 * encoding (the timestamps' phase at the task's periods, read beside the values), trained with the
 * MSE at lr 3e-3 on the series task with its default context and horizon (48 and 12 steps) and
 * periods 12 and 24 (tests/browser/chapters_forecast.test.mjs trains the same).
 */
const FORECAST = { dModel: 32, numHeads: 2, ffDim: 64, numLayers: 1, periods: [12, 24], lr: 3e-3, batchSize: 16, warmupSteps: 10, heldOutSeed: 1000 } as const;

export function forecast(lab: AttnLab, r: ForecastRequest, progress: Progress): ForecastFigure {
  const { positional, steps, seed } = r;
  return owning((keep) => {
    const task = keep(new lab.Task('series', { periods: [...FORECAST.periods], seed }));
    const model = keep(new lab.Model({ kind: 'forecaster', architecture: 'transformer', positional, numFeatures: 1,
      timePeriods: [...FORECAST.periods], horizon: task.numClasses(), maxLen: task.seqLen(), dModel: FORECAST.dModel, numHeads: FORECAST.numHeads, ffDim: FORECAST.ffDim,
      numLayers: FORECAST.numLayers, seed }));
    const trainer = keep(new lab.Trainer(model, task, { lr: FORECAST.lr, batchSize: FORECAST.batchSize, warmupSteps: FORECAST.warmupSteps, seed, trackAttention: false }));
    const loss = train(trainer, steps, progress);
    const held = trainer.evaluate(8);
    // One held-out series (a seed the training stream does not draw from): values (1, T, 1), time (1, T + horizon).
    const batch = task.sample(1, seed + FORECAST.heldOutSeed);
    const predicted = model.forecast(batch.values!, batch.time!);
    return {
      figure: 'forecast', positional, steps, loss, mse: held.loss, mae: held.mae, baselineMse: held.baselineMse, baselineMae: held.baselineMae,
      context: Array.from(batch.values!.data), truth: Array.from(batch.forecast!.data),
      forecast: Array.from(predicted.data), baseline: Array.from(batch.baseline!.data),
    };
  });
}
