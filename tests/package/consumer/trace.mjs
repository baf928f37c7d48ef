// tests/package/consumer/trace.mjs: the attention trace the package test runs in every setting
// (Node through the installed package, a Vite-built page in both flavours, and the repository's
// own loader as the reference). It takes a loaded module, so it does not care where that came from.

// T queries over a width C = H·D with H heads, causal, RoPE: the walkthrough's kind of example.
export const T = 6, C = 16, H = 4;
export const OPTIONS = { causal: true, positional: 'rope' };

// x (T, C): a fixed, easily reproduced input.
export function input() {
  return { shape: [T, C], data: Float32Array.from({ length: T * C }, (_, i) => Math.sin(0.37 * i + 0.1)) };
}

// Traces one layer and calls forward on the same input. Returns plain arrays (JSON-safe: the
// masked scores' -Infinity become the string '-inf'):
//   info                    lab.buildInfo()
//   weights[h], masked[h]   (T, T) per head h < H, row-major
//   output                  (T, C) the trace's last stage
//   forward                 (T, C) what mha.forward returns for the same call
export function attentionTrace(lab) {
  const mha = new lab.MultiHeadAttention({ dModel: C, numHeads: H, seed: 7 });
  const trace = mha.trace(input(), OPTIONS);
  const plain = (t) => Array.from(t.data, (v) => (v === -Infinity ? '-inf' : v));
  const perHead = (name) => Array.from({ length: H }, (_, h) => plain(trace.stage(name, h)));
  const result = {
    info: lab.buildInfo(),
    stageNames: trace.stageNames(),
    weights: perHead('weights'),
    masked: perHead('masked'),
    output: plain(trace.stage('output')),
    forward: plain(mha.forward(input(), OPTIONS)),
  };
  trace.delete();
  mha.delete();
  return result;
}
