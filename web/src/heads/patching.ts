// The Heads tab's patching section: its store, the pairs of prompts the page suggests for each model,
// and the only code that changes the store (a worker call, protocol/lens.ts 'patch').
import { t } from '../i18n';
import type { EngineClient } from '../engine/client/client';
import type { InterpSource, PatchResult } from '../engine/protocol/lens';
import { Store } from '../util/store';

/** A clean and a corrupted prompt of the same length, and the answer the clean one favours over the corrupted one's. */
export interface PatchPair {
  clean: string;
  corrupted: string;
  answer: string;
  wrong: string;
}

/**
 * The pairs suggested for a model by its weights' file name. brown (byte BPE): its names are
 * mostly several tokens (" Mary" is two), so the indirect-object prompt names "the man" and "the
 * woman" (one token each), and a repetition the model can copy; tang (characters): two couplets
 * that differ in one character, the line repeated; GPT-2: the indirect-object prompt of Wang et al. (2022).
 */
export const SUGGESTED: Record<string, PatchPair[]> = {
  'brown.safetensors': [
    { clean: 'the war and the war and the', corrupted: 'the land and the land and the', answer: ' war', wrong: ' land' },
    {
      clean: 'When the man and the woman went to the store, the man gave a drink to the',
      corrupted: 'When the man and the woman went to the store, the woman gave a drink to the',
      answer: ' woman',
      wrong: ' man',
    },
  ],
  'tang.safetensors': [
    { clean: '山中一夜雨，山中一夜', corrupted: '山中一夜风，山中一夜', answer: '雨', wrong: '风' },
    { clean: '春风花草香，春风花草', corrupted: '春风花草长，春风花草', answer: '香', wrong: '长' },
  ],
  'model.safetensors': [
    {
      clean: 'When Mary and John went to the store, John gave a drink to',
      corrupted: 'When Mary and John went to the store, Mary gave a drink to',
      answer: ' Mary',
      wrong: ' John',
    },
  ],
};

export interface PatchingState {
  pair: PatchPair;
  status: 'idle' | 'computing' | 'ready' | 'error';
  /** The model and pair the result is for (source|model key|pair). */
  key: string;
  result: PatchResult | null;
  error: string | null;
  /** The heat-map cell the reader clicked: which table, row, column. */
  picked: { table: 'heads' | 'residual'; i: number; j: number } | null;
}

export const patchingStore = new Store<PatchingState>({
  pair: SUGGESTED['brown.safetensors'][0],
  status: 'idle',
  key: '',
  result: null,
  error: null,
  picked: null,
});

let engine: EngineClient | null = null;
export function attachPatchingEngine(client: EngineClient) {
  engine = client;
}

/** The pairs for the model named `name` (none for a model the page knows no pair for). */
export const suggestionsFor = (name: string): PatchPair[] => SUGGESTED[name] ?? [];

/** Patches the pair on the model (`modelKey` names it: a new model or pair computes again). */
export async function runPatching(source: InterpSource, modelKey: string, pair: PatchPair) {
  if (!engine) return;
  const key = `${source}|${modelKey}|${JSON.stringify(pair)}`;
  if (key === patchingStore.get().key && patchingStore.get().status !== 'error') return;
  patchingStore.set({ pair, key, status: 'computing', error: null, picked: null });
  try {
    const r = await engine.call('patch', { kind: 'patch', source, ...pair });
    if (patchingStore.get().key === key) patchingStore.set({ status: 'ready', result: r.result });
  } catch (e) {
    if (patchingStore.get().key === key) patchingStore.set({ status: 'error', result: null, error: t('heads.patch.error', { message: e instanceof Error ? e.message : String(e) }) });
  }
}

/** The reader's pair, typed or suggested, not yet patched. */
export const setPair = (pair: PatchPair) => patchingStore.set({ pair });
export const pickCell = (picked: PatchingState['picked']) => patchingStore.set({ picked });
