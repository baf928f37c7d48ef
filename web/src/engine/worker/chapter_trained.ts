// The chapters' figures of trained models, computed in the engine worker: a tiny model is trained
// on one of the engine's tasks for a few hundred steps (seeded, so a request always gives the same
// model), in chunks with progress posted between them, and the figure shows its attention.
import type { AttnLab, Model, Task, Trainer } from '../../../attnlab';
import type { FigureData, FigureProgress } from '../protocol/chapters';
import type { Tensor } from '../protocol/messages';

const own = (t: Tensor): Tensor => ({ shape: [...t.shape], data: new Float32Array(t.data) });

/** Steps per chunk between progress reports. */
const CHUNK = 25;

export type Progress = (p: FigureProgress) => void;

/** Trains `steps` steps in chunks, reporting after each; the last chunk's loss. */
function train(trainer: Trainer, figure: FigureProgress['figure'], steps: number, progress: Progress): number {
  let loss = NaN;
  while (trainer.stepsDone() < steps) {
    const m = trainer.step(Math.min(CHUNK, steps - trainer.stepsDone()));
    loss = m.loss;
    progress({ figure, step: m.step, total: steps, loss });
  }
  return loss;
}

/** Deletes what `fn` made (model, task, trainer), even when it throws. */
function owning<R>(fn: (keep: <T extends Model | Task | Trainer>(x: T) => T) => R): R {
  const made: { delete(): void }[] = [];
  try {
    return fn((x) => (made.push(x), x));
  } finally {
    for (const d of made.reverse()) d.delete();
  }
}

/**
 * The crossmodal model used by §7's figure: d_model 32, patches of 4 pixels, 2 layers, trained with
 * the CLIP loss at lr 3e-3 on caption_match. Exported for the test that re-trains it.
 */
export const CROSSMODAL = { dModel: 32, numHeads: 2, ffDim: 64, numLayers: 2, patchSize: 4, lr: 3e-3, batchSize: 16 };

/** §7: a crossmodal model trained on caption_match; each word's attention over a held-out image's patches. */
export function crossmodal(lab: AttnLab, steps: number, seed: number, progress: Progress): FigureData {
  return owning((keep) => {
    const task = keep(new lab.Task('caption_match', { vocab: 4, seed }));
    const S = task.imageSize();
    const model = keep(new lab.Model({ kind: 'encoder', architecture: 'crossmodal', vocabSize: task.vocabSize(), numClasses: 2, imageSize: S,
      patchSize: CROSSMODAL.patchSize, positional: 'learned', dModel: CROSSMODAL.dModel, numHeads: CROSSMODAL.numHeads, ffDim: CROSSMODAL.ffDim,
      numLayers: CROSSMODAL.numLayers, loss: 'clip', seed }));
    const trainer = keep(new lab.Trainer(model, task, { lr: CROSSMODAL.lr, batchSize: CROSSMODAL.batchSize, seed, trackAttention: false }));
    const loss = train(trainer, 'crossmodal', steps, progress);
    const held = trainer.evaluate(8);
    // Held-out pairs (a seed the training stream does not draw from); the figure shows matching ones.
    const batch = task.sample(8, seed + 1000);
    const T = task.seqLen();
    const pairs = [];
    for (let b = 0; b < 8 && pairs.length < 4; b++) {
      if (batch.labels!.data[b] !== 1) continue;
      const tokens = batch.tokens!.data.slice(b * T, (b + 1) * T);
      const pair = { tokens: batch.tokens!, images: batch.pixels! };
      pairs.push({
        words: (task.decode(Int32Array.from(tokens)) as string).split(' '),
        image: { shape: [S, S], data: new Float32Array(batch.pixels!.data.subarray(b * S * S, (b + 1) * S * S)) } as Tensor,
        maps: own(model.attentionMaps(pair, { batch: b })),
        match: model.predict({ tokens: Int32Array.from(tokens), images: { shape: [S, S], data: batch.pixels!.data.slice(b * S * S, (b + 1) * S * S) } }).data[1],
        index: b,
      });
    }
    return { figure: 'crossmodal', steps, loss, accuracy: held.accuracy, evalCount: held.count, grid: S / CROSSMODAL.patchSize, patchSize: CROSSMODAL.patchSize, pairs };
  });
}

/** The decoder used by §5's figure (k_back, k positions back). */
export const LONGRANGE = { dModel: 32, numHeads: 2, numLayers: 1, length: 24, vocab: 8, lr: 3e-3, batchSize: 16 };

/** §5: a one-layer decoder trained on k_back; its attention map on a held-out sequence. */
export function longRange(lab: AttnLab, k: number, steps: number, seed: number, progress: Progress): FigureData {
  return owning((keep) => {
    const task = keep(new lab.Task('k_back', { length: LONGRANGE.length, vocab: LONGRANGE.vocab, k, seed }));
    const model = keep(new lab.Model({ kind: 'decoder', vocabSize: task.vocabSize(), maxLen: Math.max(32, task.seqLen()), dModel: LONGRANGE.dModel,
      numHeads: LONGRANGE.numHeads, numLayers: LONGRANGE.numLayers, seed }));
    const trainer = keep(new lab.Trainer(model, task, { lr: LONGRANGE.lr, batchSize: LONGRANGE.batchSize, seed, trackAttention: false }));
    const loss = train(trainer, 'longrange', steps, progress);
    const held = trainer.evaluate(8);
    const batch = task.sample(1, seed + 1000);
    const tokens = Int32Array.from(batch.tokens!.data);
    return { figure: 'longrange', k, steps, loss, accuracy: held.accuracy, tokens: Array.from(tokens), maps: own(model.attentionMaps(tokens)) };
  });
}

/**
 * The forecaster used by §7's series figure: a one-block Transformer with the sinusoidal or the
 * time-aware encoding (the timestamps' phase at the task's periods, read beside the values), trained with the MSE at lr 3e-3 on the series task
 * with its default context and horizon (48 and 12 steps) and periods 12 and 24.
 */
export const FORECAST = { dModel: 32, numHeads: 2, ffDim: 64, numLayers: 1, periods: [12, 24], lr: 3e-3, batchSize: 16, warmupSteps: 10, heldOutSeed: 1000 } as const;

/** §7: a forecaster trained on the series task; its forecast of a held-out series beside the truth and the seasonal-naive baseline. */
export function forecast(lab: AttnLab, positional: 'sinusoidal' | 'time', steps: number, seed: number, progress: Progress): FigureData {
  return owning((keep) => {
    const task = keep(new lab.Task('series', { periods: [...FORECAST.periods], seed }));
    const model = keep(new lab.Model({ kind: 'forecaster', architecture: 'transformer', positional, numFeatures: 1,
      timePeriods: [...FORECAST.periods], horizon: task.numClasses(), maxLen: task.seqLen(), dModel: FORECAST.dModel, numHeads: FORECAST.numHeads, ffDim: FORECAST.ffDim,
      numLayers: FORECAST.numLayers, seed }));
    const trainer = keep(new lab.Trainer(model, task, { lr: FORECAST.lr, batchSize: FORECAST.batchSize, warmupSteps: FORECAST.warmupSteps, seed, trackAttention: false }));
    const loss = train(trainer, 'forecast', steps, progress);
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
