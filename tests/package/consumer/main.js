// tests/package/consumer/main.js: the page's script, bundled by Vite together with the package.
// Runs the trace on the page's main thread and in a Web Worker, and leaves both (or the first
// error) on window for the test: window.__trace = { crossOriginIsolated, main, worker }.
import { loadAttnLab } from 'attnlab';
import { attentionTrace } from './trace.mjs';

function inWorker() {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./engine.worker.js', import.meta.url), { type: 'module' });
    worker.onmessage = ({ data }) => (data.error ? reject(new Error(`worker: ${data.error}`)) : resolve(data.trace));
    worker.onerror = (e) => reject(new Error(`worker: ${e.message}`));
  });
}

Promise.all([loadAttnLab().then(attentionTrace), inWorker()]).then(
  ([main, worker]) => {
    window.__trace = { crossOriginIsolated: globalThis.crossOriginIsolated, main, worker };
  },
  (e) => {
    window.__traceError = String(e?.message ?? e);
  },
);
