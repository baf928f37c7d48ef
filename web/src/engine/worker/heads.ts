// The Heads tab's engine calls, in the worker (protocol/heads.ts): the walkthrough's model (the
// opened checkpoint, pretrained.ts, or the lab's, training.ts) on the walkthrough's text; every
// head's attention maps and detector scores, and heads switched off by Model.ablate.
import type { AblationMethod, AttnLab, Model, Tensor } from '../../../attnlab';
import { CHOICES } from '../../../generated/choices.mjs';
import { REPEAT_SEED, type HeadsAblation, type HeadsGallery, type HeadsInput, type HeadsOutcome, type HeadsPrediction } from '../protocol/heads';
import { continuation, pretrainedInput, pretrainedLabel } from './pretrained';
import type { TrainingSession } from './training';

/** The model a request reads, the text's tokens and labels, and how it names and decodes tokens. */
interface HeadsModel {
  model: Model;
  name: string;
  tokens: number[];
  labels: string[];
  label(id: number): string;
  text(ids: number[]): string;
}

/** The lab's session and its example input, for a 'trained' request (null when the lab has none). */
export type LabModel = { session: TrainingSession | null; sample: number[] };

/**
 * The model and what it reads: the text, or with input.repeat = n the random repeated sequence of
 * 2n ids, n at most half the model's learned positions (the gallery says the n it read).
 */
function resolve(engine: AttnLab, input: HeadsInput, lab: LabModel): HeadsModel & { repeat: number } {
  const m = resolveText(input, lab);
  if (!input.repeat) return { ...m, repeat: 0 };
  const c = m.model.config();
  const n = c.positional === 'learned' ? Math.min(input.repeat, Math.floor(c.maxLen / 2)) : input.repeat;
  if (n < 1) throw new Error(`the model's ${c.maxLen} positions hold no repeated sequence`);
  const tokens = Array.from(engine.randomRepeat(n, c.vocabSize, REPEAT_SEED));
  return { ...m, tokens, labels: tokens.map((t) => m.label(t)), repeat: n };
}

function resolveText(input: HeadsInput, lab: LabModel): HeadsModel {
  if (input.source === 'pretrained') {
    const { model, info, ids, labels } = pretrainedInput(input.text);
    return { model, name: info.name, tokens: ids, labels, label: (id) => pretrainedLabel(model, id), text: (ids) => continuation(model, ids, input.text) };
  }
  const s = lab.session;
  if (!s) throw new Error('the lab has no model yet: train one or load a checkpoint');
  if (!s.hasAttention) throw new Error('the lab’s model has no attention heads (an LSTM, or a task without tokens)');
  // As the walkthrough reads the lab's model (walk_trace.ts modelTrace): the typed input, else the lab's example.
  const tokens = input.text.trim() ? Array.from(s.task.encode(input.text)) : lab.sample.length ? lab.sample : s.sampleTokens();
  if (!tokens.length) throw new Error('type an input in the task’s syntax first');
  return { model: s.model, name: s.settings.task, tokens, labels: tokens.map((t) => s.text([t])), label: (id) => s.text([id]), text: (ids) => s.text(ids) };
}

const own = (t: Tensor): Tensor => ({ shape: [...t.shape], data: new Float32Array(t.data) });

/** Every head of the model on the text: its attention maps (L, H, T, T) and its detector scores. */
export function headsGallery(engine: AttnLab, input: HeadsInput, lab: LabModel): HeadsGallery {
  const t0 = performance.now();
  const m = resolve(engine, input, lab);
  const c = m.model.config();
  const ids = Int32Array.from(m.tokens);
  const scores = m.model.headScores(ids);
  const maps = own(m.model.attentionMaps(ids));
  const scoreNames = scores.length ? Object.keys(scores[0]).filter((k) => k !== 'layer' && k !== 'head') : [];
  return {
    source: input.source,
    name: m.name,
    layers: c.numLayers,
    heads: c.numHeads,
    tokens: m.tokens,
    repeat: m.repeat,
    labels: m.labels,
    maps,
    scores,
    scoreNames,
    methods: [...CHOICES.AblationMethod] as AblationMethod[],
    elapsedMs: performance.now() - t0,
  };
}

/** The k most probable tokens of a distribution (V), most probable first (ties: the lower id). */
function topK(probs: Tensor, k: number, label: (id: number) => string): HeadsPrediction[] {
  const p = probs.data;
  const ids = Array.from({ length: p.length }, (_, i) => i);
  ids.sort((a, b) => p[b] - p[a] || a - b);
  return ids.slice(0, k).map((id) => ({ id, label: label(id), p: p[id] }));
}

const argmax = (p: ArrayLike<number>) => {
  let best = 0;
  for (let i = 1; i < p.length; ++i) if (p[i] > p[best]) best = i;
  return best;
};

/** How many tokens fit after the text: a model with learned positions reads at most maxLen. */
function room(model: Model, length: number, wanted: number): number {
  const c = model.config();
  return c.positional === 'learned' ? Math.max(0, Math.min(wanted, c.maxLen - length)) : wanted;
}

/**
 * The heads switched off together on the text (Model.ablate), and the clean model beside it. The
 * clean continuation is Model.generate's greedy one; the ablated one is greedy too, each next token
 * the most probable of Model.ablate's ablated distribution on the sequence so far (so a mean
 * ablation averages over the positions read so far).
 */
export function headsAblation(engine: AttnLab, input: HeadsInput & { heads: [number, number][]; method: AblationMethod; topK: number; generate: number }, lab: LabModel): HeadsAblation {
  const t0 = performance.now();
  const m = resolve(engine, input, lab);
  if (m.tokens.length < 2) throw new Error('the text has one token: the loss needs at least two (type a longer text)');
  const n = room(m.model, m.tokens.length, input.generate);
  // The clean side of Model.ablate does not depend on the heads named: with none switched off, any head gives it.
  const named = input.heads.length ? input.heads : ([[0, 0]] as [number, number][]);
  const a = m.model.ablate(Int32Array.from(m.tokens), { heads: named, method: input.method });
  const generated = n > 0 ? Array.from(m.model.generate(Int32Array.from(m.tokens), n, { temperature: 0 })).slice(m.tokens.length) : [];
  const clean: HeadsOutcome = { loss: a.lossClean, top: topK(a.probsClean, input.topK, m.label), continuation: generated, continuationText: m.text(generated) };
  let ablated: HeadsAblation['ablated'] = null;
  if (input.heads.length) {
    const seq = [...m.tokens];
    let next = a;
    for (let i = 0; i < n; ++i) {
      if (i > 0) next = m.model.ablate(Int32Array.from(seq), { heads: input.heads, method: input.method });
      seq.push(argmax(next.probsAblated.data));
    }
    const cont = seq.slice(m.tokens.length);
    ablated = { loss: a.lossAblated, klLast: a.klLast, klMean: a.klMean, top: topK(a.probsAblated, input.topK, m.label), continuation: cont, continuationText: m.text(cont) };
  }
  return { heads: input.heads, method: input.method, clean, ablated, elapsedMs: performance.now() - t0 };
}

