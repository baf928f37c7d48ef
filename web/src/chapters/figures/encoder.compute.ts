// §10: the encoder classifier the chapter assembles, in the engine worker. encoderParts builds the
// engine's model for the reader's choices and lists its parameters by the piece of the encoder
// they belong to (read from the engine's parameter names and shapes); encoderTrain trains it on
// the brackets task (is a sequence of brackets balanced?) and evaluates it on held-out batches.
import type { AttnLab, Model, ModelConfig, ModelOptions } from '../../../attnlab';
import type { AttentionChoice, Piece } from '../../engine/protocol/encoder';
import { owning, train, type Progress } from './training.compute';

export interface EncoderChoices { positional: ModelConfig['positional']; attention: AttentionChoice; layers: number; seed: number }
export interface EncoderPartsRequest extends EncoderChoices { figure: 'encoderParts' }
export interface EncoderTrainRequest extends EncoderChoices { figure: 'encoderTrain'; steps: number }

export interface EncoderParameter { name: string; shape: number[]; size: number; piece: Piece }
export interface EncoderPartsFigure {
  figure: 'encoderParts';
  /** The engine's config of the model (model.config()). */
  config: ModelConfig;
  /** model.numParameters(). */
  numParameters: number;
  parameters: EncoderParameter[];
  task: { name: string; seqLen: number; vocabSize: number; numClasses: number };
}
export interface EncoderTrainFigure {
  figure: 'encoderTrain';
  choices: EncoderChoices;
  steps: number;
  numParameters: number;
  /** The training loss and accuracy after each chunk of steps. */
  curve: { step: number; loss: number; accuracy: number }[];
  /** Over HELD_OUT_BATCHES held-out batches. */
  held: { loss: number; accuracy: number; count: number };
}

/** The sizes of the chapter's encoder: small enough to train in seconds on one thread. */
const SIZES = { dModel: 32, numHeads: 4, ffDim: 64, window: 3, length: 12, vocab: 2, lr: 3e-3, batchSize: 32, warmupSteps: 20 };
const HELD_OUT_BATCHES = 16;

/** Which piece a parameter belongs to, by the engine's name for it (blocks.<l>.attn.q_proj.weight, ...). */
export function pieceOf(name: string): Piece {
  if (/\.attn\./.test(name)) return 'attention';
  if (/\.ffn\./.test(name)) return 'ffn';
  if (/(^|\.)ln(1|2|_f)\./.test(name)) return 'layernorm';
  return 'embedding';
}

function makeTask(lab: AttnLab, seed: number) {
  return new lab.Task('brackets', { length: SIZES.length, vocab: SIZES.vocab, seed });
}

function makeModel(lab: AttnLab, task: ReturnType<typeof makeTask>, c: EncoderChoices): Model {
  const options: ModelOptions = {
    kind: 'encoder', vocabSize: task.vocabSize(), numClasses: task.numClasses(), maxLen: Math.max(16, task.seqLen()),
    dModel: SIZES.dModel, numHeads: SIZES.numHeads, ffDim: SIZES.ffDim, numLayers: c.layers, positional: c.positional,
    variant: c.attention === 'linear' ? 'linear' : 'full', attentionWindow: c.attention === 'window' ? SIZES.window : 0, seed: c.seed,
  };
  return new lab.Model(options);
}

export function encoderParts(lab: AttnLab, r: EncoderPartsRequest): EncoderPartsFigure {
  return owning((keep) => {
    const task = keep(makeTask(lab, r.seed));
    const model = keep(makeModel(lab, task, r));
    const parameters = model.parameterNames().map((name) => {
      const shape = [...model.getParameter(name).shape];
      return { name, shape, size: shape.reduce((a, b) => a * b, 1), piece: pieceOf(name) };
    });
    return {
      figure: 'encoderParts', config: model.config(), numParameters: model.numParameters(), parameters,
      task: { name: task.name(), seqLen: task.seqLen(), vocabSize: task.vocabSize(), numClasses: task.numClasses() },
    };
  });
}

export function encoderTrain(lab: AttnLab, r: EncoderTrainRequest, progress: Progress): EncoderTrainFigure {
  return owning((keep) => {
    const task = keep(makeTask(lab, r.seed));
    const model = keep(makeModel(lab, task, r));
    const trainer = keep(new lab.Trainer(model, task, { lr: SIZES.lr, batchSize: SIZES.batchSize, warmupSteps: SIZES.warmupSteps, seed: r.seed, trackAttention: false }));
    const curve: EncoderTrainFigure['curve'] = [];
    train(trainer, r.steps, (step, total, loss, accuracy) => {
      curve.push({ step, loss, accuracy });
      progress(step, total, loss, accuracy);
    });
    const held = trainer.evaluate(HELD_OUT_BATCHES);
    const { positional, attention, layers, seed } = r;
    return { figure: 'encoderTrain', choices: { positional, attention, layers, seed }, steps: r.steps, numParameters: model.numParameters(), curve, held: { loss: held.loss, accuracy: held.accuracy, count: held.count } };
  });
}
