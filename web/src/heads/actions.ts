// The Heads tab's actions: the only code that changes headsStore. Every number comes from the
// engine worker (protocol/heads.ts); the latest request of each kind wins.
import type { AblationMethod } from '../../attnlab';
import type { EngineClient } from '../engine/client/client';
import type { HeadsInput } from '../engine/protocol/heads';
import { t } from '../i18n';
import { headKey, headsStore, parseHeadKey, type HeadsSort, type HeadsState } from './state';

/** Next tokens listed, and tokens generated after the text, with and without the heads. */
export const TOP_K = 5;
export const GENERATE = 8;

let engine: EngineClient | null = null;
let gallerySeq = 0;
let ablationSeq = 0;

export function attachEngine(client: EngineClient) {
  engine = client;
}

/** What the gallery shows now: its input and the model's identity (a new model on the same text is computed again). */
let shownKey = '';

/** Computes the gallery of `input` (null: the walkthrough shows no language model). */
export async function showGallery(input: HeadsInput | null) {
  const seq = ++gallerySeq;
  if (!input) {
    ++ablationSeq;
    headsStore.set({ input: null, status: 'idle', error: null, gallery: null, ablation: null, ablationStatus: 'idle', off: [] });
    return;
  }
  if (!engine) return;
  headsStore.set({ input, status: 'computing', error: null });
  try {
    const { gallery } = await engine.call('heads.gallery', { kind: 'heads.gallery', ...input });
    if (seq !== gallerySeq) return;
    const prev = headsStore.get().gallery;
    // Switched-off heads stay off while the model is the same (a new text); a new model starts with all on.
    const sameModel = prev && prev.name === gallery.name && prev.layers === gallery.layers && prev.heads === gallery.heads && prev.source === gallery.source;
    const s = headsStore.get();
    headsStore.set({
      status: 'ready',
      gallery,
      off: sameModel ? s.off : [],
      sort: s.sort === 'layer' || gallery.scoreNames.includes(s.sort) ? s.sort : 'layer',
      method: gallery.methods.includes(s.method) ? s.method : gallery.methods[0],
    });
    void ablate();
  } catch (e) {
    if (seq !== gallerySeq) return;
    headsStore.set({ status: 'error', error: t('heads.engineError', { message: e instanceof Error ? e.message : String(e) }), gallery: null, ablation: null, ablationStatus: 'idle' });
  }
}

/** The gallery again when `key` (the input and the model it reads) changed, or `force`. */
export function follow(input: HeadsInput | null, key: string, force = false) {
  if (!force && key === shownKey && headsStore.get().status !== 'error') return;
  shownKey = key;
  void showGallery(input);
}

/** Runs Model.ablate for the heads switched off (none: the clean model's numbers alone). */
export async function ablate() {
  const s = headsStore.get();
  if (!engine || !s.input || !s.gallery) return;
  const seq = ++ablationSeq;
  headsStore.set({ ablationStatus: 'computing', ablationError: null });
  try {
    const heads = s.off.map(parseHeadKey);
    const { ablation } = await engine.call('heads.ablation', { kind: 'heads.ablate', ...s.input, heads, method: s.method, topK: TOP_K, generate: GENERATE });
    if (seq !== ablationSeq) return;
    headsStore.set({ ablationStatus: 'ready', ablation });
  } catch (e) {
    if (seq !== ablationSeq) return;
    headsStore.set({ ablationStatus: 'error', ablationError: t('heads.engineError', { message: e instanceof Error ? e.message : String(e) }) });
  }
}

/** Switches one head off (or back on) and recomputes. */
export function toggleHead(layer: number, head: number, off: boolean) {
  const k = headKey(layer, head);
  const now = headsStore.get().off.filter((x) => x !== k);
  if (off) now.push(k);
  now.sort((a, b) => parseHeadKey(a)[0] - parseHeadKey(b)[0] || parseHeadKey(a)[1] - parseHeadKey(b)[1]);
  headsStore.set({ off: now });
  void ablate();
}

export function allOn() {
  headsStore.set({ off: [] });
  void ablate();
}

export function setMethod(method: AblationMethod) {
  headsStore.set({ method });
  void ablate();
}

export const setSort = (sort: HeadsSort) => headsStore.set({ sort });
export const setReading = (reading: HeadsState['reading']) => headsStore.set({ reading });
