// The logit lens, direct logit attribution and activation patching of the walkthrough's decoder,
// in the engine worker (protocol/lens.ts): every number is the engine's (Model.logitLens with its
// probabilities, Model.logitAttribution, Model.patch); this file only picks the top tokens of the
// engine's rows, cuts prompts with the model's tokenizer and labels tokens.
import type { Model } from '../../../attnlab';
import type { LensRequest, LensResult, LensToken, PatchPrompt, PatchResult } from '../protocol/lens';
import type { Tensor } from '../protocol/messages';
import type { TrainingSession } from './training';

/** A decoder the tools read, with the way its page cuts and shows text. */
export interface InterpModel {
  model: Model;
  /** A prompt as the model reads it (a tokenizer's begin token first, when it has one). */
  prompt(text: string): PatchPrompt;
  /** The tokens `text` cuts into on its own (no begin token): an answer must be one. */
  pieces(text: string): PatchPrompt;
  /** A token's text as the page shows it. */
  label(id: number): string;
}

/** The lab's trained decoder, whose text is in its task's syntax (Task.encode / decode). */
export function trainedInterp(s: TrainingSession): InterpModel {
  if (!s.hasAttention || s.model.kind() !== 'decoder') {
    throw new Error(`the lab's model is not a Transformer decoder (its kind is '${s.model.kind()}', architecture '${s.model.config().architecture}'): train a decoder task`);
  }
  const cut = (text: string): PatchPrompt => {
    const ids = Array.from(s.task.encode(text));
    return { ids, labels: ids.map((t) => s.text([t])) };
  };
  return { model: s.model, prompt: cut, pieces: cut, label: (t) => s.text([t]) };
}

/** The k ids of largest value in row r of (N, V), largest first (the lower id first on a tie), as the engine's top_ids orders them. */
function topIds(data: Float32Array, v: number, r: number, k: number): number[] {
  const row = data.subarray(r * v, (r + 1) * v);
  const ids = Array.from({ length: v }, (_, i) => i);
  ids.sort((a, b) => row[b] - row[a] || a - b);
  return ids.slice(0, Math.min(k, v));
}

/** A tensor the engine returned, copied out of WebAssembly memory. */
const own = (t: Tensor): Tensor => ({ shape: [...t.shape], data: new Float32Array(t.data) });

/** The lens at the request's position, and the attribution of its token (the output's top one when none is asked). */
export function lensOf(m: InterpModel, r: Extract<LensRequest, { kind: 'lens' }>): LensResult {
  const t0 = performance.now();
  const c = m.model.config();
  const tokens = Int32Array.from(r.tokens);
  const probs = m.model.logitLens(tokens, { position: r.position, probabilities: true }); // (L + 1, V)
  const v = probs.shape[1];
  const L = c.numLayers;
  const top = (row: number): LensToken[] => topIds(probs.data, v, row, r.top).map((id) => ({ id, text: m.label(id) || `⟨${id}⟩`, p: probs.data[row * v + id] }));
  const rows = Array.from({ length: L + 1 }, (_, l) => ({ layer: l, top: top(l) }));
  const token = r.token ?? rows[L].top[0].id;
  if (!Number.isInteger(token) || token < 0 || token >= v) throw new Error(`lens: token ${token} is outside the vocabulary 0..${v - 1}`);
  const tokenP = rows.map((_, l) => probs.data[l * v + token]);
  // A post-LN model's logit is not a sum of its heads' outputs: the engine refuses it, the page says so.
  const a = c.norm === 'post' ? null : m.model.logitAttribution(tokens, { token, position: r.position });
  return {
    position: r.position,
    layers: L,
    heads: c.numHeads,
    rows,
    token,
    tokenText: m.label(token),
    tokenP,
    attribution: a && { logit: a.logit, heads: own(a.heads), attnBias: [...a.attnBias], mlp: [...a.mlp], embed: a.embed, lnBias: a.lnBias },
    elapsedMs: performance.now() - t0,
  };
}

/** The answer text as one token id, or the pieces it cuts into. */
function answerToken(m: InterpModel, text: string): { id: number; text: string } | { pieces: string[] } {
  const p = m.pieces(text);
  return p.ids.length === 1 ? { id: p.ids[0], text: m.label(p.ids[0]) } : { pieces: p.labels };
}

/** Patching from the clean prompt into the corrupted one; prompts of different lengths or an answer of several tokens are reported, not patched. */
export function patchOf(m: InterpModel, r: Extract<LensRequest, { kind: 'patch' }>): PatchResult {
  const t0 = performance.now();
  const clean = m.prompt(r.clean);
  const corrupted = m.prompt(r.corrupted);
  if (clean.ids.length !== corrupted.ids.length) return { kind: 'lengths', clean, corrupted };
  const answer = answerToken(m, r.answer);
  if ('pieces' in answer) return { kind: 'answer', which: 'answer', text: r.answer, pieces: answer.pieces };
  const wrong = answerToken(m, r.wrong);
  if ('pieces' in wrong) return { kind: 'answer', which: 'wrong', text: r.wrong, pieces: wrong.pieces };
  const p = m.model.patch(Int32Array.from(clean.ids), Int32Array.from(corrupted.ids), { answer: answer.id, wrong: wrong.id });
  return {
    kind: 'table',
    clean,
    corrupted,
    answer,
    wrong,
    cleanDiff: p.cleanDiff,
    corruptedDiff: p.corruptedDiff,
    heads: own(p.heads),
    residual: own(p.residual),
    elapsedMs: performance.now() - t0,
  };
}
