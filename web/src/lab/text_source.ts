// Train on text: the text a run trains on. The corpora's training text is part of the built page
// (web/dist/corpora/<name>.txt, written by scripts/build_web.sh with `attnlab corpus`), fetched
// only when a run needs it, with its progress in the store; the reader's own file is read when
// picked. The engine reads the bytes (Task.fromText), so a file that is not UTF-8 is refused by
// it, naming the byte.
import type { TextCorpus, TextSource } from '../engine/protocol/lab';
import { labStore } from './state';

/** Tokens of each corpus: characters for the poems and a reader's file, a BPE learned from the text for Brown. */
export const CORPUS_TOKENS: Record<TextCorpus, 'char' | 'bpe'> = { tang: 'char', brown: 'bpe', file: 'char' };

const fetched = new Map<string, Uint8Array>();
let ownFile: { name: string; bytes: Uint8Array } | null = null;

/** The reader picked a file: kept until another is picked (its name shows beside the picker). */
export function pickFile(name: string, bytes: Uint8Array) {
  ownFile = { name, bytes };
  labStore.set({ textFile: name, error: null });
}

/** A corpus's training text, fetched once, its progress in `textLoad`. */
async function fetchCorpus(name: 'tang' | 'brown'): Promise<Uint8Array> {
  const cached = fetched.get(name);
  if (cached) return cached;
  const url = new URL(`corpora/${name}.txt`, document.baseURI).href;
  labStore.set({ textLoad: { name, loaded: 0, total: 0 } });
  try {
    let r: Response;
    try {
      r = await fetch(url);
    } catch (e) {
      throw new Error(`the ${name} corpus could not be fetched from ${url} (${e instanceof Error ? e.message : String(e)})`);
    }
    if (!r.ok || !r.body) throw new Error(`the ${name} corpus could not be fetched from ${url} (HTTP ${r.status})`);
    const total = Number(r.headers.get('content-length')) || 0;
    const reader = r.body.getReader();
    const parts: Uint8Array[] = [];
    let loaded = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      parts.push(value);
      loaded += value.length;
      labStore.set({ textLoad: { name, loaded, total } });
    }
    const bytes = new Uint8Array(loaded);
    let at = 0;
    for (const p of parts) {
      bytes.set(p, at);
      at += p.length;
    }
    fetched.set(name, bytes);
    return bytes;
  } finally {
    labStore.set({ textLoad: null });
  }
}

/** The text of a run on `corpus` (a copy the worker may keep), or an Error saying what is missing. */
export async function textSource(corpus: TextCorpus): Promise<TextSource> {
  if (corpus === 'file') {
    if (!ownFile) throw new Error('no file picked: choose a UTF-8 text file first');
    return { name: ownFile.name, tokens: CORPUS_TOKENS.file, bytes: ownFile.bytes.slice() };
  }
  return { name: corpus, tokens: CORPUS_TOKENS[corpus], bytes: (await fetchCorpus(corpus)).slice() };
}
