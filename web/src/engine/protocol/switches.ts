// The lab's engine switches: one table of every ModelConfig / TrainerOptions switch the lab's form
// offers beyond its main fields, with the form's choices and defaults. The form, the URL, the
// settings comparison and the model and trainer the worker builds (worker/training.ts) all read
// this table. The choices of an engine enum are the engine's own (web/generated/choices.mjs).
import type { AttentionVariant, Normalizer, Precision } from '../../../attnlab';
import { CHOICES } from '../../../generated/choices.mjs';

export interface EngineSwitch {
  /** The LabSettings field (and URL key). */
  key: keyof EngineSwitchSettings;
  /** The form's choices; a boolean switch is a checkbox. */
  choices: readonly (string | number)[] | 'boolean';
  default: string | number | boolean;
  /** Where it goes: the model (a new model when it changes) or the trainer (a new trainer for the same model). */
  target: 'model' | 'trainer';
}

/** The switches as LabSettings fields (absent = the default). */
export interface EngineSwitchSettings {
  normalizer?: Normalizer;
  variant?: AttentionVariant;
  precision?: Precision;
  /** 1 (off), a fixed factor, or 'dynamic'. */
  lossScale?: string;
  /** Sliding window W (0 = full attention) and its global tokens. */
  window?: number;
  globalTokens?: number;
  dropout?: number;
  /** Feed-forward width as a multiple of d_model. */
  ffMult?: number;
  tieQK?: boolean;
  checkpointing?: boolean;
  /** Warm-up steps; -1 = a tenth of the run (at most 100). */
  warmup?: number;
  /** 'cosine' decay to lr/10 over the run, or 'constant' after warm-up. */
  schedule?: 'cosine' | 'constant';
}

export const ENGINE_SWITCHES: readonly EngineSwitch[] = [
  { key: 'normalizer', choices: CHOICES.Normalizer, default: 'softmax', target: 'model' },
  { key: 'variant', choices: CHOICES.AttentionVariant, default: 'full', target: 'model' },
  { key: 'precision', choices: CHOICES.Precision, default: 'fp32', target: 'model' },
  { key: 'lossScale', choices: ['1', '1024', '65536', 'dynamic'], default: '1', target: 'trainer' },
  { key: 'window', choices: [0, 1, 2, 4, 8], default: 0, target: 'model' },
  { key: 'globalTokens', choices: [0, 1, 2], default: 0, target: 'model' },
  { key: 'dropout', choices: [0, 0.1, 0.2, 0.3], default: 0, target: 'model' },
  { key: 'ffMult', choices: [1, 2, 4, 8], default: 4, target: 'model' },
  { key: 'tieQK', choices: 'boolean', default: false, target: 'model' },
  { key: 'checkpointing', choices: 'boolean', default: false, target: 'model' },
  { key: 'warmup', choices: [-1, 0, 10, 50, 100], default: -1, target: 'trainer' },
  { key: 'schedule', choices: ['cosine', 'constant'], default: 'cosine', target: 'trainer' },
];

/** The switch's value in `s`, or its default. */
export function switchValue<K extends keyof EngineSwitchSettings>(s: EngineSwitchSettings, key: K): NonNullable<EngineSwitchSettings[K]> {
  const v = s[key];
  return (v ?? ENGINE_SWITCHES.find((w) => w.key === key)!.default) as NonNullable<EngineSwitchSettings[K]>;
}

/** Every switch at its default: what DEFAULT_LAB holds. */
export const SWITCH_DEFAULTS = Object.fromEntries(ENGINE_SWITCHES.map((w) => [w.key, w.default])) as Required<EngineSwitchSettings>;
