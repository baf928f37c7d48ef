// Reading a decoder's prediction through its depth: the logit lens with direct logit attribution
// (the walkthrough's output step) and activation patching (the Heads tab), computed by the engine
// worker (worker/lens.ts) on the walkthrough's model (Model.logitLens, logitAttribution, patch;
// definitions in docs/interpretability.md).
import type { Tensor } from '../../../attnlab';

/** Which model the worker reads: the lab's trained decoder or the walkthrough's opened (shipped or reader's) one. */
export type InterpSource = 'trained' | 'pretrained';

/** One token of a layer's read-out: its id, its text as the model decodes it, its probability. */
export interface LensToken {
  id: number;
  text: string;
  p: number;
}

export interface LensResult {
  position: number;
  /** Blocks L and heads per block H of the model. */
  layers: number;
  heads: number;
  /** L + 1 rows: row l reads the residual entering block l (row L: leaving the last block, the model's output). */
  rows: { layer: number; top: LensToken[] }[];
  /** The token attributed (the reader's or the output's top token) and its text. */
  token: number;
  tokenText: string;
  /** Its probability at each row (L + 1). */
  tokenP: number[];
  /** Direct logit attribution of `token` (Model.logitAttribution); null for a post-LN model, which has none. */
  attribution: { logit: number; heads: Tensor; attnBias: number[]; mlp: number[]; embed: number; lnBias: number } | null;
  elapsedMs: number;
}

/** A prompt as the model's tokenizer cut it: ids and the text of each. */
export interface PatchPrompt {
  ids: number[];
  labels: string[];
}

export type PatchResult =
  /** The engine's patching tables (Model.patch): restored share = (d_patched − d_corrupted) / (d_clean − d_corrupted). */
  | {
      kind: 'table';
      clean: PatchPrompt;
      corrupted: PatchPrompt;
      answer: { id: number; text: string };
      wrong: { id: number; text: string };
      cleanDiff: number;
      corruptedDiff: number;
      /** (L, H): each head's output at every position patched from clean into corrupted. */
      heads: Tensor;
      /** (L, T): the residual entering block l at position t patched. */
      residual: Tensor;
      elapsedMs: number;
    }
  /** The prompts cut into different numbers of tokens: patching needs position t of one to be position t of the other. */
  | { kind: 'lengths'; clean: PatchPrompt; corrupted: PatchPrompt }
  /** An answer that is not exactly one token of the model: `pieces` are the tokens it cuts into. */
  | { kind: 'answer'; which: 'answer' | 'wrong'; text: string; pieces: string[] };

export type LensRequest =
  /** The logit lens at `position` of `tokens` with the top `top` tokens per row; `token` null = the output's top token. */
  | { kind: 'lens'; source: InterpSource; tokens: number[]; position: number; top: number; token: number | null }
  /** Patching from `clean` into `corrupted` (texts) with the logit difference of `answer` over `wrong` (texts of one token each). */
  | { kind: 'patch'; source: InterpSource; clean: string; corrupted: string; answer: string; wrong: string };

export type LensReply = { kind: 'lens'; result: LensResult } | { kind: 'patch'; result: PatchResult };
