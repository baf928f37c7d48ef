// web/attnlab.d.ts: TypeScript declarations for the attnlab WebAssembly module (Embind API) and
// its loader. Everything bound in web/bindings/*.cpp is declared here; see web/README.md.
//
//   import createAttnLab from './wasm/threads/attnlab.mjs';   // or loadAttnLab() from ./engine/loader.mjs
//   const lab: AttnLab = await createAttnLab();
//   const mha = new lab.MultiHeadAttention({ dModel: 8, numHeads: 2 });
//   const y: Tensor = mha.forward({ shape: [4, 8], data: new Float32Array(32) }, { causal: true });

/** A row-major float32 tensor. Crossing the boundary always copies: `data` is never a view into WASM memory. */
export interface Tensor {
  shape: number[];
  data: Float32Array;
}

/** A boolean mask, 1 (or true) = masked out, row-major. */
export interface Mask {
  shape: number[];
  data: Uint8Array | ArrayLike<number | boolean>;
}

/** Stage names in canonical order (the order of computation); the single table is attnlab::stage_name. */
export type StageName =
  | 'x' | 'q' | 'k' | 'v' | 'q_rot' | 'k_rot' | 'scores' | 'scaled' | 'masked' | 'weights' | 'context' | 'concat' | 'output';

export type Flavour = 'threads' | 'single' | 'scalar';

export interface BuildInfo {
  version: string;
  /** WASM SIMD (false only in the scalar flavour). */
  simd: boolean;
  /** Threads the kernels use now (setNumThreads changes it). */
  threads: number;
  flavour: Flavour;
  /** Largest valid setNumThreads argument: the pthread pool size, 1 without threads. */
  poolSize: number;
  /** MAXIMUM_MEMORY of the module. */
  maxMemoryMB: number;
  /** Largest tensor (in floats) a call may allocate; larger requests throw an Error. */
  maxTensorElements: number;
}

export interface MultiHeadAttentionOptions {
  /** C, the model width (required). */
  dModel: number;
  /** H, query heads (default 1); dModel must be divisible by it. */
  numHeads?: number;
  /** Hkv, key/value heads: numHeads (default, also 0) is MHA, 1 is MQA, another divisor GQA. */
  numKvHeads?: number;
  /** Biases on all four projections (default true). */
  bias?: boolean;
  /** Width of `memory` for cross-attention (default dModel; 0 also means dModel). */
  kvDim?: number;
  /** Seed of the initialisation (default 0). */
  seed?: number;
}

export interface MultiHeadAttentionConfig {
  dModel: number;
  numHeads: number;
  numKvHeads: number;
  headDim: number;
  bias: boolean;
  kvDim: number;
}

export interface ForwardOptions {
  /** Hide future keys (query i sees keys j <= i + S - T). */
  causal?: boolean;
  /** (B, S), 1 = padded key; (S) also accepted for unbatched x. */
  keyPaddingMask?: Mask | null;
  /** (T, S), 1 = forbidden (query, key) pair, shared by the batch. */
  attnMask?: Mask | null;
  /** true: 1/sqrt(D) (default); false: no scaling; a number: that factor. */
  scale?: boolean | number;
  /** 'rope' rotates q and k per head; 'sinusoidal' adds the Vaswani table to x first. Default 'none'. */
  positional?: 'none' | 'rope' | 'sinusoidal';
  /** RoPE base (default 10000). */
  ropeBase?: number;
  /** Absolute position of the first row (default 0). */
  positionOffset?: number;
  /** Cross-attention keys/values: (S, Ckv) for unbatched x, (B, S, Ckv) otherwise. */
  memory?: Tensor | null;
  /** Throw on NaN/Inf in x or memory. */
  checkFinite?: boolean;
}

export interface TraceOptions extends ForwardOptions {
  /** Record only these stages (default: all). */
  stages?: StageName[];
}

/** The stages one attention call recorded. Call delete() when done. */
export interface Trace {
  /** Recorded stages in canonical order. */
  stageNames(): StageName[];
  /**
   * One (rows, cols) matrix: per-head stages (q, k, v, q_rot, k_rot, scores, scaled, masked, weights,
   * context) take a head index (k, k_rot, v count key/value heads), default 0; x, concat, output
   * take -1 (the default). batch defaults to 0.
   */
  stage(name: StageName, head?: number, batch?: number): Tensor;
  /** Heads recorded for the stage (1 for whole-width stages). */
  numHeads(name: StageName): number;
  numBatches(name: StageName): number;
  delete(): void;
  isDeleted(): boolean;
}

/** Multi-head attention (MHA / GQA / MQA, self or cross) with PyTorch's parameter names. Call delete() when done. */
export interface MultiHeadAttention {
  config(): MultiHeadAttentionConfig;
  /** q_proj.weight, q_proj.bias, k_proj..., v_proj..., out_proj... (biases only when present). */
  parameterNames(): string[];
  /** A copy of the parameter; weights are (out_features, in_features). */
  getParameter(name: string): Tensor;
  /** Copies the tensor into the parameter; its shape must match exactly. */
  setParameter(name: string, value: Tensor): void;
  /** x: (T, C) or (B, T, C) -> the same shape. */
  forward(x: Tensor, options?: ForwardOptions): Tensor;
  trace(x: Tensor, options?: TraceOptions): Trace;
  delete(): void;
  isDeleted(): boolean;
}

export interface MultiHeadAttentionConstructor {
  new (options: MultiHeadAttentionOptions): MultiHeadAttention;
}

/** The module object. Every bad argument throws an Error naming the problem; the module stays usable. */
export interface AttnLab {
  buildInfo(): BuildInfo;
  /** 1..buildInfo().poolSize. */
  setNumThreads(n: number): void;
  /** Every stage in canonical order. */
  stageNames(): StageName[];
  /** Bytes malloc currently hands out (for leak checks). */
  heapUsed(): number;
  /** Bytes of the main WASM stack in use between calls (for leak checks). */
  stackUsed(): number;
  MultiHeadAttention: MultiHeadAttentionConstructor;
  /** Emscripten runtime: the heap view (its length is the memory size) and the live emval handles. */
  HEAP8: Int8Array;
  count_emval_handles(): number;
  /** threads flavour only: terminateAllThreads() lets Node exit. */
  PThread?: { terminateAllThreads(): void };
}

export interface CreateAttnLabOptions {
  /** The .wasm bytes (Node: Node 20's fetch cannot load a file path). */
  wasmBinary?: ArrayBuffer | Uint8Array;
  locateFile?: (file: string, scriptDirectory: string) => string;
  print?: (text: string) => void;
  printErr?: (text: string) => void;
}

/** web/wasm/<flavour>/attnlab.mjs default export. */
export default function createAttnLab(options?: CreateAttnLabOptions): Promise<AttnLab>;

// web/engine/loader.mjs
export declare const FLAVOURS: Flavour[];
/** 'threads' where SharedArrayBuffer is usable (Node, cross-origin-isolated pages), else 'single'. */
export declare function pickFlavour(): Flavour;
export declare function loadAttnLab(options?: { flavour?: Flavour; baseUrl?: URL | string }): Promise<AttnLab>;
/** Stops the pthread Workers (threads flavour); the module must not be used afterwards. */
export declare function unloadAttnLab(lab: AttnLab): void;
