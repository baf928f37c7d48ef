// tests/package/consumer/engine.worker.js: the same trace in a module Web Worker, where a page
// runs long engine work. Vite bundles it (with the package) from main.js's new Worker(new URL(...)).
import { loadAttnLab } from 'attnlab';
import { attentionTrace } from './trace.mjs';

loadAttnLab().then(
  (lab) => postMessage({ trace: attentionTrace(lab) }),
  (e) => postMessage({ error: String(e?.message ?? e) }),
);
