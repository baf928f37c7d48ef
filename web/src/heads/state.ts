// The Heads tab's store: the walkthrough's model the gallery shows, every head's maps and scores
// (the engine's), the sort, the heads switched off and what switching them off does.
import type { AblationMethod } from '../../attnlab';
import type { HeadsAblation, HeadsGallery, HeadsInput } from '../engine/protocol/heads';
import { Store } from '../util/store';

/** 'layer' keeps the model's order (layer by layer, head by head); any other value is a score key, highest first. */
export type HeadsSort = 'layer' | string;

export interface HeadsState {
  /** What the gallery reads: the walkthrough's model and text, or null when it shows random weights (no language model). */
  input: HeadsInput | null;
  status: 'idle' | 'computing' | 'ready' | 'error';
  error: string | null;
  gallery: HeadsGallery | null;
  sort: HeadsSort;
  /** What the heads read: the walkthrough's text, or a random sequence repeated (protocol/heads.ts REPEAT_TOKENS). */
  reading: 'text' | 'repeat';
  /** The heads switched off, as "layer.head". */
  off: string[];
  method: AblationMethod;
  ablationStatus: 'idle' | 'computing' | 'ready' | 'error';
  ablationError: string | null;
  ablation: HeadsAblation | null;
}

export const headsStore = new Store<HeadsState>({
  input: null,
  status: 'idle',
  error: null,
  gallery: null,
  sort: 'layer',
  reading: 'text',
  off: [],
  method: 'zero',
  ablationStatus: 'idle',
  ablationError: null,
  ablation: null,
});

export const headKey = (layer: number, head: number) => `${layer}.${head}`;
export const parseHeadKey = (k: string): [number, number] => k.split('.').map(Number) as [number, number];
