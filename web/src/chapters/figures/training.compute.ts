// What the trained figures' computations share, run in the engine worker: a tiny model is trained
// on one of the engine's tasks for a few hundred steps (seeded, so a request always gives the same
// model), in chunks with progress posted between them, and the figure shows its attention.
import type { Model, Task, Trainer } from '../../../attnlab';

/** Steps per chunk between progress reports. */
const CHUNK = 25;

/** Told after each chunk: the steps done of `total`, the chunk's last loss and accuracy. */
export type Progress = (step: number, total: number, loss: number, accuracy: number) => void;

/** Trains `steps` steps in chunks, reporting after each; the last chunk's loss. */
export function train(trainer: Trainer, steps: number, progress: Progress): number {
  let loss = NaN;
  while (trainer.stepsDone() < steps) {
    const m = trainer.step(Math.min(CHUNK, steps - trainer.stepsDone()));
    loss = m.loss;
    progress(m.step, steps, loss, m.accuracy);
  }
  return loss;
}

/** Deletes what `fn` made (model, task, trainer), even when it throws. */
export function owning<R>(fn: (keep: <T extends Model | Task | Trainer>(x: T) => T) => R): R {
  const made: { delete(): void }[] = [];
  try {
    return fn((x) => (made.push(x), x));
  } finally {
    for (const d of made.reverse()) d.delete();
  }
}
