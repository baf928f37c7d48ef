// bench/compare/common.mjs: what every Node bench of the comparison shares — argument parsing,
// the shared input files written by `torch_bench.py prepare`, the timing rule and the check.
//
//   const args = parseArgs(process.argv, { sizes: [256, 1024], threads: [1, 2], seconds: 2 });
//   const { q, k, v, ref } = loadInputs(args.data, 256);   // Float32Array (H, n, D) each
//   const { ms, repeats } = await timeCalls(() => run(), args.seconds);
//   const err = maxAbsDiff(out, ref);                       // ok when <= TOLERANCE
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';

export const H = 4, D = 32;          // heads, head dim: Q/K/V are (H, n, D), batch 1
export const SCALE = 1 / Math.sqrt(D);
export const TOLERANCE = 1e-4;
export const here = path.dirname(fileURLToPath(import.meta.url));

// --sizes 256,1024 --threads 1,2 --seconds 2 --data DIR (lists are comma-separated numbers).
export function parseArgs(argv, defaults) {
  const args = { data: path.join(here, 'results', 'data'), ...defaults };
  const rest = argv.slice(2);
  for (let i = 0; i < rest.length; i += 2) {
    const key = rest[i].replace(/^--/, '');
    if (!(key in args)) throw new Error(`unknown option --${key} (valid: ${Object.keys(args).map((k) => `--${k}`).join(', ')})`);
    const value = rest[i + 1];
    if (value === undefined) throw new Error(`option --${key} needs a value`);
    args[key] = Array.isArray(defaults[key]) ? value.split(',').map(Number)
      : typeof defaults[key] === 'number' ? Number(value) : value;
  }
  return args;
}

// The file torch_bench.py prepare wrote: float32 q, k, v, reference, each (H, n, D).
export function loadInputs(dataDir, n) {
  const file = path.join(dataDir, `attn_n${n}.bin`);
  const bytes = fs.readFileSync(file);
  const count = H * n * D;
  if (bytes.length !== 4 * 4 * count) {
    throw new Error(`${file}: expected ${4 * 4 * count} bytes (q, k, v, ref of (${H}, ${n}, ${D})), got ${bytes.length}`);
  }
  const all = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
  const [q, k, v, ref] = [0, 1, 2, 3].map((i) => all.slice(i * count, (i + 1) * count));
  return { q, k, v, ref };
}

export function maxAbsDiff(a, b) {
  if (a.length !== b.length) throw new Error(`maxAbsDiff: lengths differ (${a.length} vs ${b.length})`);
  let m = 0;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(a[i] - b[i]);
    if (!(d <= m)) m = d;  // NaN propagates as NaN
  }
  return m;
}

export function median(values) {
  const s = [...values].sort((p, q) => p - q);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

// Median ms over repeats after `warmup` calls; the repeat count fills about targetSeconds
// (at least minRepeats, at most maxRepeats). fn may be async.
export async function timeCalls(fn, targetSeconds, { minRepeats = 5, maxRepeats = 200, warmup = 2 } = {}) {
  const start = performance.now();
  for (let i = 0; i < warmup; i++) await fn();
  const perCall = (performance.now() - start) / warmup;
  const repeats = Math.round(Math.min(maxRepeats, Math.max(minRepeats, (targetSeconds * 1e3) / Math.max(perCall, 1e-6))));
  const times = [];
  for (let i = 0; i < repeats; i++) {
    const t0 = performance.now();
    await fn();
    times.push(performance.now() - t0);
  }
  return { ms: median(times), repeats };
}

export function result(fields, err) {
  return { ...fields, max_abs_err: err, ok: err <= TOLERANCE };
}

// The installed version of an npm package of this folder (its package.json is not always exported).
export function packageVersion(name) {
  return JSON.parse(fs.readFileSync(path.join(here, 'node_modules', name, 'package.json'), 'utf8')).version;
}
