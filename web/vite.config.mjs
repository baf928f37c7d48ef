// web/vite.config.mjs: builds the page (index.html + src/**) into web/dist.
//
// The engine is NOT bundled: web/engine/loader.mjs and the Emscripten output in web/wasm/<flavour>/
// (attnlab.mjs, attnlab.wasm, attnlab.worker.js: a classic script) are copied verbatim next to the
// bundle, keeping their relative layout, and the engine worker imports the loader by URL at run
// time. Bundling Emscripten's pthread glue would break its worker-file and .wasm look-ups.
import { cpSync, existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import { sourceExcerpts } from './source_excerpts.mjs';

const webDir = dirname(fileURLToPath(import.meta.url));
const isolationHeaders = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

function copyEngine() {
  return {
    name: 'attnlab-copy-engine',
    apply: 'build',
    closeBundle() {
      const out = join(webDir, 'dist');
      for (const rel of ['engine', 'wasm/threads', 'wasm/single']) {
        const from = join(webDir, rel);
        if (!existsSync(from)) {
          this.warn(`${rel}/ not found: the page will report that the engine is missing (run scripts/build_wasm.sh)`);
          continue;
        }
        mkdirSync(join(out, rel), { recursive: true });
        cpSync(from, join(out, rel), { recursive: true });
      }
    },
  };
}

export default defineConfig({
  root: webDir,
  base: './',
  publicDir: false,
  plugins: [copyEngine(), sourceExcerpts(join(webDir, '..'), join(webDir, 'src/chapters/figures/check.excerpts.json'))],
  worker: { format: 'es' },
  build: {
    outDir: join(webDir, 'dist'),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: true,
    chunkSizeWarningLimit: 800,
  },
  server: { headers: isolationHeaders, host: '127.0.0.1' },
  preview: { headers: isolationHeaders, host: '127.0.0.1' },
});
