// web/examples/hello.mjs: attnlab from JavaScript in a dozen lines.
//   scripts/build_wasm.sh && node web/examples/hello.mjs
import { loadAttnLab, unloadAttnLab } from '../engine/loader.mjs';

const lab = await loadAttnLab();                       // threads in Node, single on plain pages
console.log(lab.buildInfo());

const [T, C] = [4, 8];
const x = { shape: [T, C], data: Float32Array.from({ length: T * C }, (_, i) => Math.sin(i)) };
const mha = new lab.MultiHeadAttention({ dModel: C, numHeads: 2, seed: 1 });

const y = mha.forward(x, { causal: true, positional: 'rope' });
console.log('output', y.shape, y.data.slice(0, 4));

const trace = mha.trace(x, { causal: true, positional: 'rope' });
console.log('stages', trace.stageNames().join(' '));
const w = trace.stage('weights', 1);                   // head 1: (T, T), causal: upper triangle is exactly 0
for (let i = 0; i < T; i++) console.log(Array.from(w.data.slice(i * T, i * T + T), (v) => v.toFixed(3)).join(' '));

try {
  mha.forward({ shape: [T, C + 1], data: new Float32Array(T * (C + 1)) });
} catch (e) {
  console.log('Error:', e.message);                   // names the expected and the actual shape
}

trace.delete();
mha.delete();
unloadAttnLab(lab);                                    // let Node exit (stops the pthread Workers)
