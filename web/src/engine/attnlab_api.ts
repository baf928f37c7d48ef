// The slice of the engine's JavaScript API (issue 4; web/attnlab.d.ts) that the page uses.
// Declared structurally here so that the page type-checks before and after the bindings grow;
// only engine/worker.ts and engine/training_engine.ts touch these objects.
import type { Tensor } from './protocol';

export interface Deletable {
  delete(): void;
}

export interface BuildInfo {
  version: string;
  simd: boolean;
  threads: number;
  flavour?: string;
}

export interface EngineTrace extends Deletable {
  stageNames(): string[];
  stage(name: string, head?: number, batch?: number): Tensor;
  numHeads(name: string): number;
}

export interface MhaOptions {
  causal?: boolean;
  keyPaddingMask?: { shape: number[]; data: Uint8Array } | null;
  scale?: boolean | number;
  window?: number;
  globalTokens?: number;
  positional?: 'none' | 'rope' | 'sinusoidal';
  stages?: string[];
}

export interface EngineMha extends Deletable {
  parameterNames(): string[];
  getParameter(name: string): Tensor;
  trace(x: Tensor, options?: MhaOptions): EngineTrace;
  forward(x: Tensor, options?: MhaOptions): Tensor;
}

export interface AttnLabModule {
  buildInfo(): BuildInfo;
  setNumThreads?(n: number): void;
  stageNames?(): string[];
  MultiHeadAttention: new (options: {
    dModel: number;
    numHeads: number;
    numKvHeads: number;
    bias: boolean;
    seed: number;
  }) => EngineMha;
  // Training (issue 4), possibly absent in this build: see training_engine.ts.
  Model?: unknown;
  Task?: unknown;
  Trainer?: unknown;
}

export type LoadAttnLab = (options?: { flavour?: 'threads' | 'single' }) => Promise<AttnLabModule>;
