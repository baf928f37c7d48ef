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
import { backLossStep } from './12_back_loss';
import { backOutProjStep } from './13_back_out_proj';
import { backWeightedSumStep } from './14_back_weighted_sum';
import { backSoftmaxStep } from './15_back_softmax';
import { backQkvStep } from './16_back_qkv';
import { backParamsStep } from './17_back_params';
import { kvCacheStep } from './18_kv_cache';

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
  // Backward mode: the same layer's gradients under one simple loss, from the output back to the weights.
  backLossStep,
  backOutProjStep,
  backWeightedSumStep,
  backSoftmaxStep,
  backQkvStep,
  backParamsStep,
  // Generation: the same layer producing one token at a time through a KV cache.
  kvCacheStep,
];

/** Index of the first backward step (the step list's second part). */
export const FIRST_BACKWARD_STEP = STEPS.indexOf(backLossStep);
/** Index of the generation step (the step list's third part). */
export const FIRST_GENERATION_STEP = STEPS.indexOf(kvCacheStep);
