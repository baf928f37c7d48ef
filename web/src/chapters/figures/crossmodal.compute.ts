// §7: a crossmodal model trained on caption_match; each word's cross-attention over the patches of
// held-out images its caption describes.
import type { AttnLab, Tensor } from '../../../attnlab';
import { own } from './layer.compute';
import { owning, train, type Progress } from './training.compute';

export interface CrossmodalRequest { figure: 'crossmodal'; steps: number; seed: number }
export interface CrossmodalFigure {
  figure: 'crossmodal';
  steps: number;
  /** Training loss of the last chunk; held-out accuracy and pair count from trainer.evaluate. */
  loss: number;
  accuracy: number;
  evalCount: number;
  grid: number;
  patchSize: number;
  /** Held-out matching pairs: the caption's words, the (S, S) image, model.attentionMaps (H, T, N), P(match). */
  pairs: { words: string[]; image: Tensor; maps: Tensor; match: number; index: number }[];
}

/**
 * The crossmodal model of the figure: d_model 32, patches of 4 pixels, 2 layers, trained with the
 * CLIP loss at lr 3e-3 on caption_match (tests/browser/chapters_figures.test.mjs trains the same).
 */
const CROSSMODAL = { dModel: 32, numHeads: 2, ffDim: 64, numLayers: 2, patchSize: 4, lr: 3e-3, batchSize: 16 };

export function crossmodal(lab: AttnLab, r: CrossmodalRequest, progress: Progress): CrossmodalFigure {
  const { steps, seed } = r;
  return owning((keep) => {
    const task = keep(new lab.Task('caption_match', { vocab: 4, seed }));
    const S = task.imageSize();
    const model = keep(new lab.Model({ kind: 'encoder', architecture: 'crossmodal', vocabSize: task.vocabSize(), numClasses: 2, imageSize: S,
      patchSize: CROSSMODAL.patchSize, positional: 'learned', dModel: CROSSMODAL.dModel, numHeads: CROSSMODAL.numHeads, ffDim: CROSSMODAL.ffDim,
      numLayers: CROSSMODAL.numLayers, loss: 'clip', seed }));
    const trainer = keep(new lab.Trainer(model, task, { lr: CROSSMODAL.lr, batchSize: CROSSMODAL.batchSize, seed, trackAttention: false }));
    const loss = train(trainer, steps, progress);
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
