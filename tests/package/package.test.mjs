// The npm package `attnlab` as a tutorial author gets it: scripts/pack_js.sh packs it, the tarball
// is installed (offline: the package has no dependencies) into a fresh project, Node imports it by
// name and runs an attention trace, and a page built by Vite from that project runs the same trace
// in headless Chromium (on its main thread and in a Worker), threaded when cross-origin isolated
// and single-threaded when not.
// Every run's numbers are checked against the same trace through the repository's own loader.
//   scripts/build_wasm.sh threads single && node --test tests/package/
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';

import { loadAttnLab, unloadAttnLab } from '../../web/engine/loader.mjs';
import { startServer } from '../../scripts/serve.mjs';
import { CHROMIUM_ARGS, repoRoot } from '../browser/support.mjs';
import { attentionTrace } from './consumer/trace.mjs';

const consumerDir = join(repoRoot, 'tests', 'package', 'consumer');
// Vite, TypeScript and playwright-core are dev dependencies of web/ (scripts/build_web.sh installs them).
const webModules = join(repoRoot, 'web', 'node_modules');
const { chromium } = createRequire(join(repoRoot, 'web', 'package.json'))('playwright-core');

const cmakeVersion = readFileSync(join(repoRoot, 'CMakeLists.txt'), 'utf8').match(/project\(attnlab VERSION (\d+\.\d+\.\d+)/)[1];
const run = (cmd, args, cwd) => execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

let project;     // the temporary consumer project
let tarball;     // build-js/attnlab-<version>.tgz
let reference;   // attentionTrace through web/engine/loader.mjs (threads flavour)

before(async () => {
  tarball = run('bash', [join(repoRoot, 'scripts', 'pack_js.sh')], repoRoot).trim().split('\n').at(-1);
  project = mkdtempSync(join(tmpdir(), 'attnlab-package-'));
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'attnlab-consumer', private: true, type: 'module' }));
  cpSync(consumerDir, project, { recursive: true });
  run('npm', ['install', '--offline', '--no-audit', '--no-fund', tarball], project);
  const lab = await loadAttnLab({ flavour: 'threads' });
  reference = attentionTrace(lab);
  unloadAttnLab(lab);
});

after(() => {
  if (project) rmSync(project, { recursive: true, force: true });
});

// Each (T, T) / (T, C) array of a trace equals the reference's within tol (0: bit for bit).
function assertSameTrace(actual, what, tol) {
  assert.deepEqual(actual.stageNames, reference.stageNames, `${what}: stage names`);
  const close = (a, b, name) => {
    assert.equal(a.length, b.length, `${what}: ${name} has ${a.length} values, the reference ${b.length}`);
    for (let i = 0; i < a.length; i++) {
      const ok = typeof b[i] === 'string' ? a[i] === b[i] : Math.abs(a[i] - b[i]) <= tol;
      assert.ok(ok, `${what}: ${name}[${i}] = ${a[i]}, the reference ${b[i]} (tolerance ${tol})`);
    }
  };
  for (const name of ['weights', 'masked']) actual[name].forEach((head, h) => close(head, reference[name][h], `${name} head ${h}`));
  close(actual.output, reference.output, 'output');
  // The trace's last stage is what a direct forward call returns, in the same run.
  assert.deepEqual(actual.output, actual.forward, `${what}: the output stage differs from mha.forward`);
}

test('the tarball holds the loader, both flavours and the declarations (with the generated tables), at the CMake version, with no dependencies', () => {
  const files = run('tar', ['tzf', tarball], repoRoot).trim().split('\n').sort();
  assert.deepEqual(files, [
    'package/README.md', 'package/attnlab.d.ts', 'package/engine/loader.mjs', 'package/generated/types.d.ts',
    'package/package.json',
    'package/wasm/single/attnlab.mjs', 'package/wasm/single/attnlab.wasm', 'package/wasm/single/package.json',
    'package/wasm/threads/attnlab.mjs', 'package/wasm/threads/attnlab.wasm', 'package/wasm/threads/attnlab.worker.js',
    'package/wasm/threads/package.json',
  ]);
  const installed = join(project, 'node_modules', 'attnlab');
  const pkg = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
  assert.equal(pkg.name, 'attnlab');
  assert.equal(pkg.version, cmakeVersion);
  assert.equal(pkg.type, 'module');
  assert.equal(pkg.dependencies, undefined);
  // The classic pthread worker must not be read as an ES module.
  for (const flavour of ['threads', 'single']) {
    assert.deepEqual(JSON.parse(readFileSync(join(installed, 'wasm', flavour, 'package.json'), 'utf8')), { type: 'commonjs' });
  }
  // Each shipped file is the one the repository built, not a stale copy.
  for (const [inPackage, source] of [['engine/loader.mjs', 'web/engine/loader.mjs'], ['attnlab.d.ts', 'web/attnlab.d.ts'],
    ['wasm/threads/attnlab.wasm', 'web/wasm/threads/attnlab.wasm'], ['wasm/single/attnlab.mjs', 'web/wasm/single/attnlab.mjs']]) {
    assert.ok(readFileSync(join(installed, inPackage)).equals(readFileSync(join(repoRoot, source))), `${inPackage} differs from ${source}`);
  }
});

test('Node: `import { loadAttnLab } from "attnlab"` runs the trace in the threads flavour', () => {
  const out = JSON.parse(run('node', ['node.mjs'], project));
  assert.equal(out.info.flavour, 'threads');
  assert.equal(out.info.version, cmakeVersion);
  assertSameTrace(out, 'Node', 0);
  const resolved = run('node', ['--input-type=module', '-e',
    "for (const s of ['attnlab', 'attnlab/threads', 'attnlab/single']) console.log(import.meta.resolve(s))"], project);
  assert.deepEqual(resolved.trim().split('\n').map((u) => fileURLToPath(u).slice(project.length)), [
    '/node_modules/attnlab/engine/loader.mjs', '/node_modules/attnlab/wasm/threads/attnlab.mjs',
    '/node_modules/attnlab/wasm/single/attnlab.mjs',
  ]);
});

test('TypeScript finds the declarations through `types` and `exports` (Node and bundler resolution)', () => {
  const tsc = join(webModules, '.bin', 'tsc');
  for (const [module, resolution] of [['nodenext', 'nodenext'], ['esnext', 'bundler']]) {
    const args = ['--noEmit', '--strict', '--target', 'es2022', '--lib', 'es2022,dom', '--module', module, '--moduleResolution', resolution, 'types.ts'];
    let out = '';
    try {
      run(tsc, args, project);
    } catch (e) {
      out = `${e.stdout}${e.stderr}`;
    }
    assert.equal(out, '', `tsc --moduleResolution ${resolution}:\n${out}`);
  }
});

test('a Vite-built page runs the trace on its main thread and in a Worker: threads when cross-origin isolated, single otherwise', async (t) => {
  const started = performance.now();
  const viteLog = run(join(webModules, '.bin', 'vite'), ['build', '--logLevel', 'warn'], project);
  assert.doesNotMatch(viteLog, /warn|error|externalized|doesn't exist/i, `vite build printed:\n${viteLog}`);
  // The loader's new URL(..., import.meta.url) references became emitted assets (the module, its
  // .wasm and, for threads, the worker), none of them inlined.
  const assets = readdirSync(join(project, 'dist', 'assets'));
  for (const re of [/^attnlab-.*\.mjs$/, /^attnlab-.*\.wasm$/, /^attnlab\.worker-.*\.js$/]) {
    assert.ok(assets.some((a) => re.test(a)), `dist/assets has no ${re}: ${assets.join(', ')}`);
  }
  const built = performance.now();

  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS });
  try {
    for (const [isolation, flavour] of [[true, 'threads'], [false, 'single']]) {
      const { server, url } = await startServer({ port: 0, dir: join(project, 'dist'), isolation });
      const page = await browser.newPage();
      const problems = [];
      page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
      page.on('console', (m) => { if (m.type() === 'error') problems.push(`console error: ${m.text()}`); });
      page.on('response', (r) => { if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`); });
      try {
        await page.goto(url);
        await page.waitForFunction(() => window.__trace || window.__traceError, null, { timeout: 30000 });
        const { trace, error } = await page.evaluate(() => ({ trace: window.__trace, error: window.__traceError }));
        assert.equal(error, undefined, `page (isolation ${isolation}): ${error}`);
        assert.equal(trace.crossOriginIsolated, isolation);
        for (const where of ['main', 'worker']) {
          assert.equal(trace[where].info.flavour, flavour, `page's ${where} thread`);
          // Both flavours run the same kernels; the threaded one splits the rows between threads.
          assertSameTrace(trace[where], `page, ${flavour}, ${where} thread`, 1e-6);
        }
        assert.deepEqual(problems, []);
      } finally {
        await page.close();
        await new Promise((r) => server.close(r));
      }
    }
  } finally {
    await browser.close();
  }
  t.diagnostic(`vite build ${((built - started) / 1000).toFixed(1)} s, both pages ${((performance.now() - built) / 1000).toFixed(1)} s`);
});
