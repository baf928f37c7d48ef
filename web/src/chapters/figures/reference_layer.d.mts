// Types of reference_layer.mjs (plain JavaScript, so the chapter can show it as it runs).
export type Params = Record<string, Float32Array>;
export interface ReferenceForward {
  /** (T, C) projections before the split. */
  q: Float32Array;
  k: Float32Array;
  v: Float32Array;
  /** (H, T, T) attention weights. */
  A: Float32Array;
  /** (T, C) the heads' contexts side by side. */
  concat: Float32Array;
  /** (T, C) the layer's output. */
  out: Float32Array;
}
export interface ReferenceBackward extends ReferenceForward {
  /** (T, C) */
  dx: Float32Array;
  /** Shaped like p. */
  grads: Params;
}
export function linear(x: Float32Array, W: Float32Array, b: Float32Array, T: number, I: number, O: number): Float32Array;
export function attentionForward(x: Float32Array, p: Params, T: number, C: number, H: number, causal: boolean): ReferenceForward;
export function attentionBackward(x: Float32Array, g: Float32Array, p: Params, T: number, C: number, H: number, causal: boolean): ReferenceBackward;
