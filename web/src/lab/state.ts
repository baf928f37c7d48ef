// The training lab's store.
import type { AttentionMaps, EngineInfo, LabSettings, StepMetrics } from '../engine/protocol';
import { Store } from '../util/store';
import { DEFAULT_LAB } from './settings';

export interface LabState {
  settings: LabSettings;
  engine: EngineInfo | null;
  engineError: string | null;
  /** idle: no model; ready: model created, not training; training; paused; done; error */
  phase: 'unavailable' | 'idle' | 'ready' | 'training' | 'paused' | 'done' | 'error';
  message: string | null;
  metrics: StepMetrics[];
  stepsPerSecond: number;
  startedAt: number | null;
  maps: AttentionMaps | null;
  mapsStep: number;
  tryOutput: string | null;
}

export const labStore = new Store<LabState>({
  settings: DEFAULT_LAB,
  engine: null,
  engineError: null,
  phase: 'idle',
  message: null,
  metrics: [],
  stepsPerSecond: 0,
  startedAt: null,
  maps: null,
  mapsStep: 0,
  tryOutput: null,
});
