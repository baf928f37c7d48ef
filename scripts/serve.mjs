#!/usr/bin/env node
// scripts/serve.mjs: a dependency-free static server for the built page (web/dist).
//
// Why not `vite preview` or `python -m http.server`: the threaded WebAssembly build needs
// SharedArrayBuffer, which browsers only grant to cross-origin-isolated pages. That takes two
// response headers on the page (COOP same-origin, COEP require-corp) and CORP on every asset,
// plus `application/wasm` so streaming compilation works. --no-isolation leaves COOP/COEP out,
// which is how the single-threaded fallback is exercised.
//
//   node scripts/serve.mjs [--port N] [--dir web/dist] [--host 127.0.0.1] [--no-isolation]
//
// --port 0 picks a free port. The first line printed is the URL ("attnlab page: http://...").
import { createServer } from 'node:http';
import { createReadStream, statSync } from 'node:fs';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = resolve(fileURLToPath(new URL('..', import.meta.url)));

function parseArgs(argv) {
  const opts = { port: 8080, dir: join(repoRoot, 'web', 'dist'), host: '127.0.0.1', isolation: true };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`serve.mjs: ${a} needs a value`);
      return argv[++i];
    };
    if (a === '--port') opts.port = Number(value());
    else if (a === '--dir') opts.dir = resolve(value());
    else if (a === '--host') opts.host = value();
    else if (a === '--no-isolation') opts.isolation = false;
    else if (a === '--help' || a === '-h') {
      console.log('usage: node scripts/serve.mjs [--port N] [--dir web/dist] [--host 127.0.0.1] [--no-isolation]');
      process.exit(0);
    } else throw new Error(`serve.mjs: unknown argument '${a}'`);
  }
  if (!Number.isInteger(opts.port) || opts.port < 0 || opts.port > 65535) {
    throw new Error(`serve.mjs: --port must be an integer in 0..65535, got '${opts.port}'`);
  }
  return opts;
}

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.md': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
  '.safetensors': 'application/octet-stream',
};

function headersFor(file, isolation) {
  const h = {
    'Content-Type': MIME[extname(file).toLowerCase()] ?? 'application/octet-stream',
    'Cross-Origin-Resource-Policy': 'same-origin',
    'Cache-Control': 'no-cache',
    'X-Content-Type-Options': 'nosniff',
  };
  if (isolation) {
    h['Cross-Origin-Opener-Policy'] = 'same-origin';
    h['Cross-Origin-Embedder-Policy'] = 'require-corp';
  }
  return h;
}

export function startServer({ port = 0, dir, host = '127.0.0.1', isolation = true } = {}) {
  const root = resolve(dir ?? join(repoRoot, 'web', 'dist'));
  const server = createServer((req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { Allow: 'GET, HEAD' }).end();
      return;
    }
    let pathname;
    try {
      pathname = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    } catch {
      res.writeHead(400).end('bad request');
      return;
    }
    let file = normalize(join(root, pathname));
    if (file !== root && !file.startsWith(root + sep)) {
      res.writeHead(403).end('forbidden');
      return;
    }
    let st;
    try {
      st = statSync(file);
      if (st.isDirectory()) {
        file = join(file, 'index.html');
        st = statSync(file);
      }
    } catch {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8', 'Cross-Origin-Resource-Policy': 'same-origin' });
      res.end(`not found: ${pathname}\n`);
      return;
    }
    res.writeHead(200, { ...headersFor(file, isolation), 'Content-Length': st.size });
    if (req.method === 'HEAD') res.end();
    else createReadStream(file).pipe(res);
  });
  return new Promise((resolvePromise, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const addr = server.address();
      resolvePromise({ server, url: `http://${host}:${addr.port}/`, root, isolation });
    });
  });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    const opts = parseArgs(process.argv.slice(2));
    try {
      statSync(join(opts.dir, 'index.html'));
    } catch {
      console.error(`serve.mjs: ${opts.dir}/index.html not found; run scripts/build_web.sh first`);
      process.exit(1);
    }
    const { url } = await startServer(opts);
    console.log(`attnlab page: ${url}`);
    console.log(opts.isolation
      ? '(cross-origin isolated: COOP same-origin + COEP require-corp; the threaded engine will load)'
      : '(NOT cross-origin isolated: --no-isolation; the single-threaded engine will load)');
  } catch (e) {
    console.error(e.message);
    process.exit(1);
  }
}
