// The walkthrough's store: settings, the engine's trace of them, where the reader is, and the model
// the reader opened.
import type { PretrainedInfo } from '../engine/protocol/pretrained';
import type { StageData, TraceResult } from '../engine/protocol/walk';
import { Store } from '../util/store';
import type { Derived } from './derive';
import { DEFAULT_SETTINGS, type WalkInput, type WalkSettings } from './inputs';

/** The model the reader opened ("Open a model…"), while it loads and once it is open. */
export interface PretrainedState {
  phase: 'none' | 'loading' | 'ready' | 'error';
  /** The weights' file name being opened or open. */
  name: string;
  /** Bytes of the weights read so far, of total (lab.loadPretrained's onProgress). */
  loaded: number;
  total: number;
  info: PretrainedInfo | null;
  /**
   * Why it could not be opened: the engine's message and its name of a refused file's problem, or
   * (picker) the page's own words on the files picked.
   */
  error: { message: string; problem?: string; picker?: boolean } | null;
  /** Files picked that are not part of a checkpoint (model_files.ts). */
  ignored: string[];
}

export interface WalkState {
  settings: WalkSettings;
  /** The settings the current trace reflects: the reader's for random weights, the model's architecture for a trained one. */
  traced: WalkSettings | null;
  status: 'loading-engine' | 'computing' | 'ready' | 'error';
  error: string | null;
  input: WalkInput | null;
  trace: TraceResult | null;
  /**
   * With scaling off: the engine's scaled scores and weights of the same layer with scaling on,
   * for the scaling step's comparison; null with scaling on.
   */
  scaledOn: { scaled: StageData; weights: StageData } | null;
  derived: Derived | null;
  /** Bumped for every new trace, so views know to rebuild. */
  version: number;
  step: number;
  beat: number;
  playing: boolean;
  /** While playing: how long (ms) the player rests on the current picture (reading time), else 0. */
  restMs: number;
  /** Beats per second multiplier, one of SPEEDS. */
  speed: number;
  /** The query head the per-head steps show. */
  head: number;
  /** Hovered cell of the current step's main matrix, for cross-highlighting. */
  hover: [number, number] | null;
  pretrained: PretrainedState;
}

/** The player's speeds (beats per second multipliers). */
export const SPEEDS = [0.5, 1, 2, 4];

export const walkStore = new Store<WalkState>({
  settings: DEFAULT_SETTINGS,
  traced: null,
  status: 'loading-engine',
  error: null,
  input: null,
  trace: null,
  scaledOn: null,
  derived: null,
  version: 0,
  step: 0,
  beat: 0,
  playing: false,
  restMs: 0,
  speed: 1,
  head: 0,
  hover: null,
  pretrained: { phase: 'none', name: '', loaded: 0, total: 0, info: null, error: null, ignored: [] },
});
