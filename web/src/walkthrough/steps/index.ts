// The walkthrough, in order. Each step is its own script.
import type { Step } from '../step';
import { tokensStep } from './01_tokens';
import { embeddingsStep } from './02_embeddings';
import { projectionsStep } from './03_projections';
import { scoresStep } from './04_scores';
import { scalingStep } from './05_scaling';
import { maskStep } from './06_mask';
import { softmaxStep } from './07_softmax';
import { weightedSumStep } from './08_weighted_sum';
import { headsStep } from './09_heads';
import { concatStep } from './10_concat';
import { outputStep } from './11_output';

export const STEPS: Step[] = [
  tokensStep,
  embeddingsStep,
  projectionsStep,
  scoresStep,
  scalingStep,
  maskStep,
  softmaxStep,
  weightedSumStep,
  headsStep,
  concatStep,
  outputStep,
];
