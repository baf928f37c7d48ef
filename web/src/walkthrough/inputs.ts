// The walkthrough's input: a sentence -> tokens -> one seeded vector per word.
// (Compute layer: pure functions of the settings; no engine call needed for inputs.)
import type { MaskKind, Positional, Tensor, TraceRequest, TraceResult } from '../engine/protocol';
import { hash32, mulberry32, normals } from '../util/rng';

export interface WalkSettings {
  sentence: string;
  dModel: number;
  heads: number;
  kvHeads: number;
  positional: Positional;
  mask: MaskKind;
  scale: boolean;
  seed: number;
  /** random: a fresh seeded attention layer on word vectors; trained: one layer of the lab's model. */
  model: 'random' | 'trained';
  /** The lab model's layer shown (model = trained). */
  layer: number;
  /** The lab model's input in its task's syntax (model = trained); empty = the lab's example input. */
  modelInput: string;
}

export const MAX_TOKENS = 10;
/** The choices the settings form offers (and the only values a URL may restore). */
export const D_MODELS = [4, 6, 8, 12, 16, 32, 64];
export const HEAD_COUNTS = [1, 2, 4, 8];
export const POSITIONALS: { id: Positional; label: string }[] = [
  { id: 'none', label: 'none' },
  { id: 'sinusoidal', label: 'sinusoidal' },
  { id: 'rope', label: 'RoPE' },
];
export const MAX_SEED = 99999;
export const MAX_SENTENCE_CHARS = 80;
export const PAD = '⟨pad⟩';
/** How many padding tokens the "padding" mask appends (as if batched with a longer sentence). */
export const PAD_COUNT = 2;
/** W of the "causal + window" masks: each token sees itself and its W nearest past tokens. */
export const WINDOW = 2;
/** G of the "… + global" mask: the first G positions are exempt from the window. */
export const GLOBAL_TOKENS = 1;

/** The mask choices, in the order the mask select lists them. */
export const MASKS: { id: MaskKind; label: string }[] = [
  { id: 'none', label: 'none' },
  { id: 'causal', label: 'causal' },
  { id: 'padding', label: 'padding' },
  { id: 'causal+padding', label: 'causal + padding' },
  { id: 'causal+window', label: `causal + window ${WINDOW}` },
  { id: 'causal+window+global', label: `causal + window ${WINDOW} + ${GLOBAL_TOKENS} global token` },
];

export const EXAMPLES: { label: string; sentence: string }[] = [
  { label: 'I love you', sentence: 'I love you' },
  { label: 'you love I (same words, new order)', sentence: 'you love I' },
  { label: 'bank (river)', sentence: 'we sat on the river bank' },
  { label: 'bank (money)', sentence: 'the bank raised the interest rate' },
  { label: 'the cat sat on the mat', sentence: 'the cat sat on the mat' },
];

export const DEFAULT_SETTINGS: WalkSettings = {
  sentence: 'I love you',
  dModel: 8,
  heads: 2,
  kvHeads: 2,
  positional: 'none',
  mask: 'none',
  scale: true,
  seed: 1,
  model: 'random',
  layer: 0,
  modelInput: '',
};

/** Words and punctuation marks, at most MAX_TOKENS. */
export function tokenize(sentence: string): string[] {
  const words = sentence.match(/[\p{L}\p{N}']+|[^\s\p{L}\p{N}]/gu) ?? [];
  return words.slice(0, MAX_TOKENS);
}

export interface WalkInput {
  tokens: string[];
  /** (T) true where the token is padding (a masked key under the padding mask). */
  padded: boolean[];
  /** (T, C) token embeddings before positions. */
  embeddings: Tensor;
  request: TraceRequest;
}

/** The vector of one word: a function of (word, seed, C) only, so permuting words permutes rows. */
export function wordVector(word: string, seed: number, C: number): Float32Array {
  const v = normals(mulberry32(hash32(`${word.toLowerCase()}\u0000${seed}`)), C);
  // Scale to unit-variance entries of a modest size so the numbers stay readable.
  for (let i = 0; i < C; i++) v[i] = Math.fround(Math.round(v[i] * 100) / 100);
  return v;
}

export function buildInput(s: WalkSettings): WalkInput {
  const words = tokenize(s.sentence);
  const usePad = s.mask === 'padding' || s.mask === 'causal+padding';
  const tokens = usePad ? [...words, ...Array(PAD_COUNT).fill(PAD)] : words;
  const padded = tokens.map((_, i) => usePad && i >= words.length);
  const T = tokens.length;
  const C = s.dModel;
  const data = new Float32Array(T * C);
  tokens.forEach((w, i) => data.set(wordVector(w, s.seed, C), i * C));
  const embeddings = { shape: [T, C], data };
  return {
    tokens,
    padded,
    embeddings,
    request: {
      x: { shape: [T, C], data: data.slice() },
      dModel: C,
      numHeads: s.heads,
      numKvHeads: s.kvHeads,
      seed: s.seed,
      positional: s.positional,
      causal: s.mask.startsWith('causal'),
      keyPaddingMask: usePad ? Uint8Array.from(padded, (p) => (p ? 1 : 0)) : null,
      scale: s.scale,
      window: s.mask.includes('window') ? WINDOW : 0,
      globalTokens: s.mask.includes('global') ? GLOBAL_TOKENS : 0,
    },
  };
}

/**
 * The input of a trace of the lab's model: its tokens as the task decodes them, and the layer's
 * input hidden state (stage x) in place of word vectors.
 */
export function inputFromModelTrace(trace: TraceResult): WalkInput {
  const labels = trace.model?.labels ?? [];
  const x = trace.stages.x.heads[0];
  return { tokens: labels, padded: labels.map(() => false), embeddings: x, request: trace.request };
}

/** The settings a model trace reflects (its architecture, causal for a decoder), over the reader's. */
export function settingsOfModelTrace(s: WalkSettings, trace: TraceResult): WalkSettings {
  const r = trace.request;
  return {
    ...s,
    sentence: trace.model?.text ?? s.sentence,
    dModel: r.dModel,
    heads: r.numHeads,
    kvHeads: r.numKvHeads,
    positional: r.positional,
    mask: r.causal ? 'causal' : 'none',
    scale: r.scale,
    layer: trace.model?.layer ?? s.layer,
  };
}

/** Problems with the settings a reader can fix, in plain words (empty when fine). */
export function settingsProblems(s: WalkSettings): string[] {
  const out: string[] = [];
  if (s.model === 'trained') return out; // the model's own architecture; the engine checks the input
  if (tokenize(s.sentence).length === 0) out.push('Type at least one word.');
  if (s.dModel % s.heads !== 0) out.push(`d_model (${s.dModel}) must split evenly into ${s.heads} heads.`);
  if (s.heads % s.kvHeads !== 0) out.push(`${s.heads} query heads cannot share ${s.kvHeads} key/value heads evenly.`);
  if (s.kvHeads > s.heads) out.push('There cannot be more key/value heads than query heads.');
  if (s.positional === 'rope' && (s.dModel / s.heads) % 2 !== 0) out.push('RoPE rotates pairs of numbers: the head width d_k must be even.');
  return out;
}
