// The walkthrough's pretrained model (a GPT-2 checkpoint the reader opens, lab.loadPretrained):
// the files it is opened from, what the worker reports of it, and the loading's progress. The
// files cross as File objects (structured clones that share the bytes on disk): the worker reads
// them slice by slice, so the page never holds a copy of the weights.

/** The files of one model, already sorted by name (walkthrough/model_files.ts). */
export interface PretrainedFiles {
  /** model.safetensors (any name ending .safetensors). */
  weights: File;
  /** config.json, or null: the engine infers the sizes from the shapes and says so. */
  config: File | null;
  /** Tokenizer files by name (vocab.json + merges.txt, encoder.json + vocab.bpe, vocab.txt), or null. */
  tokenizer: Record<string, File> | null;
  /**
   * Where GPT-2's own tokenizer files are served (encoder.json, vocab.bpe, bundled with the page),
   * fetched by the worker only when `tokenizer` is null.
   */
  bundledTokenizerUrl: string;
}

/** What the page shows of an opened model. */
export interface PretrainedInfo {
  /** The weights' file name. */
  name: string;
  layers: number;
  heads: number;
  dModel: number;
  vocab: number;
  maxLen: number;
  parameters: number;
  /** The engine's notes on what it inferred rather than read (no config.json: n_head = n_embd / 64, ...). */
  notes: string[];
  /** Which tokenizer the model reads with: its own files, GPT-2's bundled with the page, or the one a shipped model carries. */
  tokenizer: { kind: string; source: 'files' | 'bundled' | 'shipped' };
}

/** One token of the reader's sentence, as the model's tokenizer cut it (Tokenizer.tokens). */
export interface PretrainedToken {
  id: number;
  text: string;
  /** The part of the sentence it covers (UTF-16 code units). */
  start: number;
  end: number;
}

export type PretrainedRequest =
  | { kind: 'pretrained.open'; files: PretrainedFiles }
  /** A model shipped with the page (models/tang.safetensors, ...), fetched from `url` only when chosen. */
  | { kind: 'pretrained.openShipped'; url: string; name: string }
  /** One layer of the opened model on `text`, for the walkthrough (a TraceResult, like lab.trace). */
  | { kind: 'pretrained.trace'; text: string; layer: number; generate: number };

export type PretrainedReply = { kind: 'pretrained'; info: PretrainedInfo };

/** The weights read so far while a model opens (lab.loadPretrained's onProgress). */
export type PretrainedEvent = { event: 'pretrained.progress'; loaded: number; total: number };
