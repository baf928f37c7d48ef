// The Heads tab's messages (web/src/heads/): every head of the walkthrough's model on its text, with
// the engine's detector scores (Model.headScores) and attention maps (Model.attentionMaps), and
// heads switched off (Model.ablate): the loss, the next-token predictions and a greedy continuation,
// clean and with the heads ablated. The worker holds the models (worker/heads.ts).
import type { AblationMethod, HeadScore, Tensor } from '../../../attnlab';

/** Which of the worker's models: the checkpoint the walkthrough opened (shipped or the reader's) or the lab's. */
export type HeadsSource = 'pretrained' | 'trained';

/**
 * What a request reads: the walkthrough's sentence of that model (the lab's task syntax for
 * 'trained'; empty = the lab's example), or, with `repeat` n > 0, lab.randomRepeat(n, vocabulary,
 * REPEAT_SEED): n random token ids, then the same n again (where induction heads show).
 */
export interface HeadsInput {
  source: HeadsSource;
  text: string;
  repeat?: number;
}

/** The seed of the random repeated sequence, and its half length (less when the model's learned positions hold fewer than 2n). */
export const REPEAT_SEED = 1;
export const REPEAT_TOKENS = 20;

export interface HeadsGallery {
  source: HeadsSource;
  /** The model's name as the walkthrough shows it (the weights' file name, or the lab's task). */
  name: string;
  layers: number;
  heads: number;
  /** The token ids read (a begin token first when the tokenizer has one) and each one's label. */
  tokens: number[];
  /** n of a random repeated sequence read (2n tokens), 0 for the text. */
  repeat: number;
  labels: string[];
  /** (L, H, T, T): every head's attention weights on the tokens. */
  maps: Tensor;
  /** Model.headScores, layer by layer (L·H rows). */
  scores: HeadScore[];
  /** The score keys the engine returned, in its order (the patterns, and any a model adds). */
  scoreNames: string[];
  /** The ablation methods the engine offers. */
  methods: AblationMethod[];
  elapsedMs: number;
}

/** One next-token candidate: its id, its text and its probability (the engine's softmax). */
export interface HeadsPrediction {
  id: number;
  label: string;
  p: number;
}

/** What the model does on the text: its loss, its top-k next tokens, and what it generates greedily. */
export interface HeadsOutcome {
  /** Mean next-token cross-entropy in nats over the text's positions. */
  loss: number;
  top: HeadsPrediction[];
  /** The greedy continuation's ids and its text. */
  continuation: number[];
  continuationText: string;
}

export interface HeadsAblation {
  heads: [number, number][];
  method: AblationMethod;
  clean: HeadsOutcome;
  /** With the heads ablated; null when no head is switched off. */
  ablated: (HeadsOutcome & { klLast: number; klMean: number }) | null;
  elapsedMs: number;
}

export type HeadsRequest =
  | ({ kind: 'heads.gallery' } & HeadsInput)
  /** heads: the heads switched off together ([] = none); topK next tokens; generate: tokens of continuation. */
  | ({ kind: 'heads.ablate'; heads: [number, number][]; method: AblationMethod; topK: number; generate: number } & HeadsInput);

export type HeadsReply = { kind: 'heads.gallery'; gallery: HeadsGallery } | { kind: 'heads.ablation'; ablation: HeadsAblation };
