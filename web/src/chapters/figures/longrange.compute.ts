// §5: a one-layer decoder trained on k_back (recall the token k back); its attention map on a
// held-out sequence.
import type { AttnLab, Tensor } from '../../../attnlab';
import { own } from './layer.compute';
import { owning, train, type Progress } from './training.compute';

export interface LongRangeRequest { figure: 'longrange'; k: number; steps: number; seed: number }
export interface LongRangeFigure {
  figure: 'longrange';
  k: number;
  steps: number;
  loss: number;
  accuracy: number;
  tokens: number[];
  /** model.attentionMaps(tokens): (L, H, T, T). */
  maps: Tensor;
}

/** The decoder of the figure (k_back, k positions back). */
const LONGRANGE = { dModel: 32, numHeads: 2, numLayers: 1, length: 24, vocab: 8, lr: 3e-3, batchSize: 16 };

export function longrange(lab: AttnLab, r: LongRangeRequest, progress: Progress): LongRangeFigure {
  const { k, steps, seed } = r;
  return owning((keep) => {
    const task = keep(new lab.Task('k_back', { length: LONGRANGE.length, vocab: LONGRANGE.vocab, k, seed }));
    const model = keep(new lab.Model({ kind: 'decoder', vocabSize: task.vocabSize(), maxLen: Math.max(32, task.seqLen()), dModel: LONGRANGE.dModel,
      numHeads: LONGRANGE.numHeads, numLayers: LONGRANGE.numLayers, seed }));
    const trainer = keep(new lab.Trainer(model, task, { lr: LONGRANGE.lr, batchSize: LONGRANGE.batchSize, seed, trackAttention: false }));
    const loss = train(trainer, steps, progress);
    const held = trainer.evaluate(8);
    const batch = task.sample(1, seed + 1000);
    const tokens = Int32Array.from(batch.tokens!.data);
    return { figure: 'longrange', k, steps, loss, accuracy: held.accuracy, tokens: Array.from(tokens), maps: own(model.attentionMaps(tokens)) };
  });
}
