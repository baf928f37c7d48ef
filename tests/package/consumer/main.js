// tests/package/consumer/main.js: the page's script, bundled by Vite together with the package.
// It leaves the trace (or the error) on window for the test to read.
import { loadAttnLab } from 'attnlab';
import { attentionTrace } from './trace.mjs';

loadAttnLab().then(
  (lab) => {
    window.__trace = { crossOriginIsolated: globalThis.crossOriginIsolated, ...attentionTrace(lab) };
  },
  (e) => {
    window.__traceError = String(e?.message ?? e);
  },
);
