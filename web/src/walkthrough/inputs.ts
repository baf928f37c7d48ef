// The walkthrough's input: a sentence -> tokens -> one seeded vector per word.
// (Compute layer: pure functions of the settings; no engine call needed for inputs.)
import type { Normalizer, Precision } from '../../attnlab';
import { CHOICES } from '../../generated/choices.mjs';
import { t, type Key } from '../i18n';
import type { Tensor } from '../engine/protocol/messages';
import type { MaskKind, Positional, TraceRequest, TraceResult } from '../engine/protocol/walk';
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
  /**
   * random: a fresh seeded attention layer on word vectors; trained: one layer of the lab's model;
   * pretrained: one layer of the checkpoint the reader opened ("Open a model…").
   */
  model: 'random' | 'trained' | 'pretrained';
  /** The lab model's layer shown (model = trained). */
  layer: number;
  /** The lab model's input in its task's syntax (model = trained); empty = the lab's example input. */
  modelInput: string;
  /** The opened model's sentence, layer and tokens to generate (model = pretrained). */
  pretrainedText?: string;
  pretrainedLayer?: number;
  pretrainedGenerate?: number;
  /**
   * Cross-attention (the article's §1.3): a second sentence that K and V come from, while Q comes
   * from `sentence`; empty or absent = self-attention.
   */
  context?: string;
  /** The weights' normaliser (attention/normalizer.hpp); absent = softmax. */
  normalizer?: Normalizer;
  /** The emulated number format of every stage (core/numeric_format.hpp); absent = fp32. */
  precision?: Precision;
  /** Every embedding entry times this (1, 10, 100, 1000): large activations, to see fp16 overflow (§6.3). */
  inputScale?: number;
}

export const NORMALIZERS: readonly Normalizer[] = CHOICES.Normalizer;
export const PRECISIONS: readonly Precision[] = CHOICES.Precision;
export const INPUT_SCALES = [1, 10, 100, 1000];
/** Largest finite value of each format (fp32 FLT_MAX, fp16 65504, bf16 ≈ 3.39e38). */
export const FORMAT_MAX: Record<Precision, number> = { fp32: 3.4028234663852886e38, fp16: 65504, bf16: 3.3895313892515355e38 };

/** The context sentence of cross-attention, or '' for self-attention. */
export const contextOf = (s: WalkSettings): string => (s.model === 'random' ? (s.context ?? '').trim() : '');

export const MAX_TOKENS = 10;
/** The choices the settings form offers (and the only values a URL may restore). */
export const D_MODELS = [4, 6, 8, 12, 16, 32, 64];
export const HEAD_COUNTS = [1, 2, 4, 8];
export const POSITIONALS: { id: Positional; label: () => string }[] = [
  { id: 'none', label: () => t('form.pos.none') },
  { id: 'sinusoidal', label: () => t('form.pos.sinusoidal') },
  { id: 'rope', label: () => 'RoPE' },
];
export const MAX_SEED = 99999;
/** How many tokens an opened model may generate after the sentence, through its KV cache (step 18). */
export const GENERATE_COUNTS = [1, 4, 8, 16];
export const MAX_SENTENCE_CHARS = 80;
export const PAD = '⟨pad⟩';
/** How many padding tokens the "padding" mask appends (as if batched with a longer sentence). */
export const PAD_COUNT = 2;
/** W of the "causal + window" masks: each token sees itself and its W nearest past tokens. */
export const WINDOW = 2;
/** G of the "… + global" mask: the first G positions are exempt from the window. */
export const GLOBAL_TOKENS = 1;

/** The mask choices, in the order the mask select lists them. */
export const MASKS: { id: MaskKind; label: () => string }[] = [
  { id: 'none', label: () => t('walk.mask.none') },
  { id: 'causal', label: () => t('walk.mask.causal') },
  { id: 'padding', label: () => t('walk.mask.padding') },
  { id: 'causal+padding', label: () => t('walk.mask.causalPadding') },
  { id: 'causal+window', label: () => t('walk.mask.causalWindow', { w: WINDOW }) },
  { id: 'causal+window+global', label: () => t('walk.mask.causalWindowGlobal', { w: WINDOW, g: GLOBAL_TOKENS }) },
];

/** Han, Kana and Hangul: scripts written without spaces, read one character per token. */
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;

/** Example pairs that hold the same tokens in a new order (the permutation point), per script. */
const PERMUTED = {
  latin: { a: 'I love you', b: 'you love I' },
  cjk: { a: '我爱你', b: '你爱我' },
};

/** The permutation example pair in the sentence's own script (Chinese for CJK text, else English). */
export const permutedPair = (sentence: string): { a: string; b: string } => (CJK.test(sentence) ? PERMUTED.cjk : PERMUTED.latin);

/**
 * An example of the picker. One whose point is a word's meaning (bank by a river, bank of money)
 * says in its label that it runs on random weights: the example picker is the random-weights
 * walkthrough's, whose patterns carry no meaning.
 */
const example = (name: string, gloss: Key | null, sentence: string, meaning = false) => ({
  label: () => `${gloss ? `${name} (${t(gloss)})` : name}${meaning ? ` · ${t('walk.model.random')}` : ''}`,
  sentence,
});
export const EXAMPLES: { label: () => string; sentence: string }[] = [
  example(PERMUTED.latin.a, null, PERMUTED.latin.a),
  example(PERMUTED.latin.b, 'walk.ex.sameWords', PERMUTED.latin.b),
  example(PERMUTED.cjk.a, 'walk.ex.inChinese', PERMUTED.cjk.a),
  example(PERMUTED.cjk.b, 'walk.ex.sameChars', PERMUTED.cjk.b),
  example('bank', 'walk.ex.river', 'we sat on the river bank', true),
  example('bank', 'walk.ex.money', 'the bank raised the interest rate', true),
  example('the cat sat on the mat', null, 'the cat sat on the mat'),
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

const WORD_PART = /^[\p{L}\p{N}\p{M}']+$/u;
const graphemes = new Intl.Segmenter('und', { granularity: 'grapheme' });

/**
 * All tokens of a sentence: runs of letters and digits (a word), one token per CJK character, and
 * one per other mark; an emoji with its variation selectors or ZWJ joins is one grapheme, one token.
 */
function allTokens(sentence: string): string[] {
  const out: string[] = [];
  let word = '';
  const flush = () => {
    if (word) out.push(word);
    word = '';
  };
  for (const { segment: g } of graphemes.segment(sentence)) {
    if (/^\s+$/u.test(g)) flush();
    else if (CJK.test(g)) {
      flush();
      out.push(g);
    } else if (WORD_PART.test(g)) word += g;
    else {
      flush();
      out.push(g);
    }
  }
  flush();
  return out;
}

/** What the walkthrough reads of a sentence: its first MAX_SENTENCE_CHARS characters' first MAX_TOKENS tokens, and what was cut, in words. */
export function readSentence(sentence: string): { tokens: string[]; notices: string[] } {
  const notices: string[] = [];
  const chars = Array.from(sentence);
  let text = sentence;
  if (chars.length > MAX_SENTENCE_CHARS) {
    text = chars.slice(0, MAX_SENTENCE_CHARS).join('');
    notices.push(t('walk.notice.chars', { n: chars.length, max: MAX_SENTENCE_CHARS }));
  }
  const all = allTokens(text);
  if (all.length > MAX_TOKENS) {
    const dropped = all.slice(MAX_TOKENS);
    const shown = dropped.slice(0, 4).join(' ') + (dropped.length > 4 ? ' …' : '');
    notices.push(t('walk.notice.tokens', { n: all.length, max: MAX_TOKENS, dropped: dropped.length, shown }));
  }
  return { tokens: all.slice(0, MAX_TOKENS), notices };
}

/** The tokens the walkthrough reads (see readSentence). */
export const tokenize = (sentence: string): string[] => readSentence(sentence).tokens;

export interface WalkInput {
  tokens: string[];
  /** (T) true where the token is padding (a masked key under the padding mask). */
  padded: boolean[];
  /** (T, C) token embeddings before positions. */
  embeddings: Tensor;
  request: TraceRequest;
  /** Cross-attention: the context's tokens (the keys' and values' rows) and their embeddings (S, C); absent for self-attention. */
  context?: { tokens: string[]; embeddings: Tensor };
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
  const k = s.inputScale ?? 1;
  if (k !== 1) for (let i = 0; i < data.length; i++) data[i] = Math.fround(data[i] * k);
  const embeddings = { shape: [T, C], data };
  const contextTokens = tokenize(contextOf(s));
  const S = contextTokens.length;
  const memory = new Float32Array(S * C);
  contextTokens.forEach((w, j) => memory.set(wordVector(w, s.seed, C), j * C));
  return {
    tokens,
    padded,
    embeddings,
    ...(S ? { context: { tokens: contextTokens, embeddings: { shape: [S, C], data: memory } } } : {}),
    request: {
      memory: S ? { shape: [S, C], data: memory.slice() } : null,
      normalizer: s.normalizer ?? 'softmax',
      precision: s.precision ?? 'fp32',
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
    // A checkpoint's layer is its own field (the lab's model keeps `layer`).
    ...(s.model === 'pretrained' ? { pretrainedLayer: trace.model?.layer ?? s.pretrainedLayer } : {}),
    dModel: r.dModel,
    heads: r.numHeads,
    kvHeads: r.numKvHeads,
    positional: r.positional,
    mask: r.causal ? 'causal' : 'none',
    scale: r.scale,
    layer: s.model === 'pretrained' ? s.layer : (trace.model?.layer ?? s.layer),
  };
}

/** Why `heads` query heads cannot split d_model, or null when they can. */
export const headsProblem = (dModel: number, heads: number): string | null =>
  dModel % heads === 0 ? null : t('walk.problem.heads', { d: dModel, h: heads });

/** Why `heads` query heads cannot share `kvHeads` key/value heads, or null when they can. */
export const kvHeadsProblem = (heads: number, kvHeads: number): string | null =>
  kvHeads > heads
    ? t('walk.problem.kvMore', { kv: kvHeads, h: heads })
    : heads % kvHeads === 0
      ? null
      : t('walk.problem.kvShare', { kv: kvHeads, h: heads });

/** Why RoPE cannot run with this head width, or null when it can. */
export const ropeProblem = (dModel: number, heads: number): string | null =>
  dModel % heads === 0 && (dModel / heads) % 2 !== 0 ? t('walk.problem.rope', { d: dModel, h: heads, dk: dModel / heads }) : null;

/** Why `seed` is not a seed, or null. */
const seedProblem = (seed: number): string | null =>
  Number.isInteger(seed) && seed >= 0 && seed <= MAX_SEED ? null : Number.isNaN(seed) ? t('walk.problem.seedEmpty', { max: MAX_SEED }) : t('walk.problem.seed', { max: MAX_SEED, seed });

/** Problems with the settings a reader can fix, in plain words (empty when fine). */
export function settingsProblems(s: WalkSettings): string[] {
  if (s.model === 'trained') return []; // the model's own architecture; the engine checks the input
  if (s.model === 'pretrained') return (s.pretrainedText ?? '').trim() ? [] : [t('walk.pretrained.empty')];
  const out = [
    tokenize(s.sentence).length === 0 ? t('walk.problem.empty') : null,
    headsProblem(s.dModel, s.heads),
    kvHeadsProblem(s.heads, s.kvHeads),
    s.positional === 'rope' ? ropeProblem(s.dModel, s.heads) : null,
    seedProblem(s.seed),
    contextOf(s) && s.mask !== 'none' ? t('walk.problem.crossMask') : null,
    contextOf(s) && s.positional !== 'none' ? t('walk.problem.crossPositions') : null,
  ];
  return out.filter((p): p is string => p !== null);
}
