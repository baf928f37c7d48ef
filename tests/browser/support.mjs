// Shared set-up for the browser tests: build check, a server on a free port (scripts/serve.mjs),
// and a headless Debian chromium driven by playwright-core with a fresh profile. With
// ATTNLAB_BROWSER=firefox the same tests drive Debian's firefox-esr instead (tests/browser/firefox/).
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { after, before } from 'node:test';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const BROWSERS = ['chromium', 'firefox'];
export const BROWSER = process.env.ATTNLAB_BROWSER || 'chromium';
if (!BROWSERS.includes(BROWSER)) throw new Error(`ATTNLAB_BROWSER must be one of ${BROWSERS.join(', ')}, got '${BROWSER}'`);

export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const distDir = join(repoRoot, 'web', 'dist');
export const screenshotDir = join(repoRoot, 'artifacts', 'screenshots', ...(BROWSER === 'chromium' ? [] : [BROWSER]));

// playwright-core is a dev dependency of web/ (web/package.json), not of the repository root.
const require = createRequire(join(repoRoot, 'web', 'package.json'));
const { chromium } = require('playwright-core');
const { startServer } = await import(join(repoRoot, 'scripts', 'serve.mjs'));

export const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

export function requireBuild() {
  if (!existsSync(join(distDir, 'index.html'))) throw new Error(`${distDir}/index.html missing: run scripts/build_web.sh`);
  for (const f of ['engine/loader.mjs', 'wasm/threads/attnlab.mjs', 'wasm/single/attnlab.mjs']) {
    if (!existsSync(join(distDir, f))) throw new Error(`${distDir}/${f} missing: run scripts/build_wasm.sh, then scripts/build_web.sh`);
  }
}

/**
 * Starts the server and a browser; returns helpers and a close(). `locale` sets the browser's
 * language (navigator.languages); by default it is playwright's en-US, so the page opens in English.
 * `colorScheme` ('dark' or 'light') sets prefers-color-scheme for every page.
 */
export async function launch({ isolation = true, locale = undefined, colorScheme = undefined } = {}) {
  requireBuild();
  const { server, url } = await startServer({ port: 0, dir: distDir, isolation });
  const profile = mkdtempSync(join(tmpdir(), `attnlab-${BROWSER}-`));
  const viewport = { width: 1360, height: 900 };
  const context = BROWSER === 'firefox'
    ? await (await import('./firefox/driver.mjs')).launchFirefox(profile, { viewport, ...(locale ? { locale } : {}), ...(colorScheme ? { colorScheme } : {}) })
    : await chromium.launchPersistentContext(profile, { executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS, viewport, ...(locale ? { locale } : {}), ...(colorScheme ? { colorScheme } : {}) });
  const problems = [];
  const watch = (page) => {
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console error: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()} (${r.failure()?.errorText})`));
    page.on('response', (r) => {
      if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`);
    });
    return page;
  };
  return {
    url,
    context,
    problems,
    async newPage(path = '') {
      const page = watch(context.pages()[0] ?? (await context.newPage()));
      await page.goto(url + path);
      return page;
    },
    async close() {
      await context.close();
      await new Promise((r) => server.close(r));
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

export async function screenshot(page, name) {
  mkdirSync(screenshotDir, { recursive: true });
  const path = join(screenshotDir, `${name}.png`);
  // A full-page shot of a scrolled page draws the sticky header where the viewport was.
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path, fullPage: true });
  return path;
}

/**
 * Draws every figure of the open chapter that waits to be scrolled into view (a figure on a
 * shipped model, 'deferred') by its own button, and waits until every figure is drawn. A test
 * that scrolls to a control below such a figure would draw it then, and the figure growing above
 * the control can move the control from under the click (chapters_text_figures.test.mjs tests
 * the deferral itself).
 */
export async function drawDeferredFigures(page) {
  await page.evaluate(() => document.querySelectorAll('article.chapter button[data-act="fig-compute"]').forEach((b) => b.click()));
  await page.waitForFunction(() => {
    const s = window.__attnlab?.chapters?.();
    return s && Object.values(s.figures).every((f) => f === 'ready');
  }, null, { timeout: 90000, polling: 100 });
}

/**
 * Waits two animation frames (the page renders store changes on the next frame), then until no
 * element is still drawing in later frames (the walkthrough's stage draws large steps row by row
 * and carries data-drawing until the last row is drawn).
 */
export async function settle(page) {
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  await page.waitForFunction(() => !document.querySelector('[data-drawing]'));
}

/**
 * Waits until the page's pictures stand still: no d3 transition scheduled or running on any
 * element (d3 keeps them in the element's __transition until they end) and no finite CSS
 * animation or transition running. Measuring geometry after a fixed delay instead reads a
 * picture still in motion whenever a loaded machine runs the page's frames late.
 */
export async function waitForStill(page, timeout = 30000) {
  await page.waitForFunction(() => {
    const moving = Array.from(document.querySelectorAll('*')).some((e) => e.__transition && Object.keys(e.__transition).length > 0);
    const animating = document.getAnimations().some((a) => a.playState === 'running' && a.effect?.getComputedTiming().endTime !== Infinity);
    return !moving && !animating;
  }, null, { timeout });
}

/** Waits until the walkthrough shows a trace computed by the engine. */
export async function waitForWalkthrough(page) {
  await page.waitForFunction(() => window.__attnlab?.info && window.__attnlab.walk().status === 'ready', null, { timeout: 30000 });
}

/** The lab's URL for these settings (the rest take the lab's defaults). */
export function labUrl(settings = {}) {
  return `?${new URLSearchParams({ view: 'lab', ...Object.fromEntries(Object.entries(settings).map(([k, v]) => [k, String(v)])) })}`;
}

/**
 * Waits until `reached(lab state, arg)` holds, answering the lab's long-run question on the way. The
 * page pauses a run whose measured speed says it would take over LONG_RUN_SECONDS
 * (web/src/lab/actions.ts) and asks first; the speed is the machine's, so on a loaded machine a
 * test's short run is asked about too. The reader's answer, Train anyway, is given once the run
 * has paused (the question comes before the worker's 'paused'). `reached` runs in the page.
 */
async function untilLab(page, reached, arg, timeout) {
  const end = Date.now() + timeout;
  for (;;) {
    const r = await page.waitForFunction(
      ({ src, arg }) => {
        const s = window.__attnlab?.lab();
        if (!s) return false;
        if (new Function(`return ${src}`)()(s, arg)) return 'reached';
        return s.longRun && s.phase === 'paused' ? 'asked' : false;
      },
      { src: reached.toString(), arg },
      { timeout: Math.max(1, end - Date.now()), polling: 100 },
    );
    if ((await r.jsonValue()) === 'reached') return;
    await page.locator('.lab-banner button[data-act="long-run"]').click();
    await page.waitForFunction(() => window.__attnlab.lab().longRun === null, null, { timeout: Math.max(1, end - Date.now()) });
  }
}

/** Waits until the lab's store is in `phase` ('idle', 'training', 'paused', 'done', ...). */
export async function waitForLabPhase(page, phase, timeout = 60000) {
  await page.waitForFunction((p) => window.__attnlab?.lab().phase === p, phase, { timeout, polling: 100 });
}

/** Waits until the lab's run has ended ('done'), saying Train anyway if the page asks (untilLab). */
export async function waitForLabDone(page, timeout = 60000) {
  await untilLab(page, (s) => s.phase === 'done', null, timeout);
}

/** Waits until the lab has shown at least n training steps, saying Train anyway if the page asks. */
export async function waitForLabSteps(page, n, timeout = 60000) {
  await untilLab(page, (s, k) => s.metrics.length >= k, n, timeout);
}

/** A browser on the lab with these settings, its engine loaded and no model yet: { b, page }. */
export async function openLab(settings, { isolation = true } = {}) {
  const b = await launch({ isolation });
  const page = await b.newPage(labUrl(settings));
  await page.evaluate(() => window.__attnlab.ready);
  await waitForLabPhase(page, 'idle');
  return { b, page };
}

/** What a matrix cell shows for an engine value (same rule as web/src/util/format.ts cellText). */
export function cellText(v, digits = 2) {
  if (v === -Infinity) return '−∞';
  if (v === Infinity) return '+∞';
  if (Number.isNaN(v)) return 'NaN';
  const s = v.toFixed(digits);
  return (/^-0\.?0*$/.test(s) ? s.slice(1) : s).replace('-', '−');
}

/** Every cell of the matrix figure `name` on the page: [{i, j, text, value}] (value parsed from data-value). */
export async function readMatrix(page, name) {
  return page.$$eval(`figure[data-matrix="${name}"] g.cell`, (cells) =>
    cells.map((c) => {
      const raw = c.getAttribute('data-value');
      const value = raw === '−∞' ? -Infinity : raw === '+∞' ? Infinity : Number(raw);
      return { i: Number(c.getAttribute('data-i')), j: Number(c.getAttribute('data-j')), text: c.querySelector('text')?.textContent ?? '', value, masked: c.getAttribute('data-masked') === '1' };
    }),
  );
}

/**
 * Recomputes the page's current walkthrough settings with a SEPARATE engine instance loaded in the
 * page's main thread (the single-threaded build, straight from web/engine/loader.mjs), and returns
 * every stage as plain arrays: { [stage]: [[...head 0 values], [...head 1], ...] } plus shapes.
 * `patch` overrides fields of the page's request (e.g. { scale: true }).
 */
export async function engineReference(page, patch = {}) {
  return page.evaluate(async (patch) => {
    const s = window.__attnlab.walk();
    const req = { ...s.input.request, ...patch };
    if (!window.__refLab) {
      const { loadAttnLab } = await import(new URL('engine/loader.mjs', document.baseURI).href);
      window.__refLab = await loadAttnLab({ flavour: 'single' });
    }
    const lab = window.__refLab;
    const mha = new lab.MultiHeadAttention({ dModel: req.dModel, numHeads: req.numHeads, numKvHeads: req.numKvHeads, bias: true, seed: req.seed });
    const [T] = req.x.shape;
    const tr = mha.trace(req.x, {
      causal: req.causal,
      keyPaddingMask: req.keyPaddingMask ? { shape: [T], data: req.keyPaddingMask } : null,
      scale: req.scale,
      positional: req.positional,
      normalizer: req.normalizer,
      precision: req.precision,
    });
    const enc = (v) => (v === -Infinity ? '-inf' : v === Infinity ? 'inf' : v);
    const out = {};
    for (const name of tr.stageNames()) {
      const n = tr.numHeads(name);
      const perHead = !['x', 'concat', 'output'].includes(name);
      out[name] = [];
      for (let h = 0; h < (perHead ? n : 1); h++) {
        const t = perHead ? tr.stage(name, h) : tr.stage(name);
        // flushed: the cells fp16/bf16 rounding flushed to ±0 (Trace.flushedCells)
        out[name].push({ shape: t.shape, data: Array.from(t.data, enc), flushed: Array.from(tr.flushedCells(name, perHead ? h : -1)) });
      }
    }
    tr.delete();
    mha.delete();
    return out;
  }, patch).then((out) => {
    for (const heads of Object.values(out)) for (const t of heads) t.data = t.data.map((v) => (v === '-inf' ? -Infinity : v === 'inf' ? Infinity : v));
    return out;
  });
}

/** Asserts that a matrix on the page shows exactly the engine's tensor (text to 2 decimals, hover value exact). */
export function compareMatrix(assert, cells, tensor, what) {
  const [R, K] = tensor.shape;
  assert.equal(cells.length, R * K, `${what}: ${cells.length} cells shown, engine has ${R}×${K}`);
  for (const c of cells) {
    const v = tensor.data[c.i * K + c.j];
    assert.equal(c.text, cellText(v), `${what}[${c.i}][${c.j}] shows '${c.text}', engine value ${v} → '${cellText(v)}'`);
    const same = Number.isFinite(v) ? Math.fround(c.value) === v : c.value === v;
    assert.ok(same, `${what}[${c.i}][${c.j}] hover value ${c.value} != engine ${v}`);
  }
}

/**
 * Registers the before/after hooks of a test file that drives one walkthrough page: a browser
 * (launch options as in launch()) and a page waiting for its first trace. Returns { b, page }, filled
 * in by the before hook.
 */
export function useWalkthroughPage(options = {}) {
  const ctx = { b: null, page: null };
  before(async () => {
    ctx.b = await launch(options);
    ctx.page = await ctx.b.newPage('?view=walk');
    await waitForWalkthrough(ctx.page);
  });
  after(async () => {
    await ctx.b?.close();
  });
  return ctx;
}

/**
 * Runs `action` while Chromium traces the page, and returns every renderer main-thread task over
 * `minWallMs` of wall time as { wallMs, cpuMs, name, url } (url: the script of its first function
 * call, if any). A task's wall time includes the time its thread waited for a CPU, which on a
 * loaded machine can be hundreds of ms for a few ms of work; its thread (CPU) time is what the
 * page's own code costs. Outside Chromium (no DevTools trace) it runs `action` and returns [].
 */
const TASK_EVENTS = ['RunTask', 'ThreadControllerImpl::RunTask'];

export async function traceMainThreadTasks(page, action, minWallMs = 50) {
  // The trace is Chromium's DevTools protocol: in another browser the action runs, unmeasured.
  if (BROWSER !== 'chromium') {
    await action();
    return [];
  }
  const cdp = await page.context().newCDPSession(page);
  const events = [];
  cdp.on('Tracing.dataCollected', (d) => events.push(...d.value));
  const complete = new Promise((r) => cdp.once('Tracing.tracingComplete', r));
  await cdp.send('Tracing.start', { categories: 'toplevel,devtools.timeline', transferMode: 'ReportEvents' });
  try {
    await action();
  } finally {
    await cdp.send('Tracing.end');
    await complete;
    await cdp.detach();
  }
  const threadNames = new Map(events.filter((e) => e.name === 'thread_name').map((e) => [`${e.pid}:${e.tid}`, e.args.name]));
  const onMain = events.filter((e) => e.ph === 'X' && threadNames.get(`${e.pid}:${e.tid}`) === 'CrRendererMain');
  // A task is a top-level scheduler event (its name differs between Chromium versions); nested ones are one task.
  const all = onMain.filter((e) => TASK_EVENTS.includes(e.name));
  if (all.length === 0) throw new Error(`the trace holds no main-thread tasks (${events.length} events): nothing was measured`);
  const inside = (e, t) => e !== t && e.ts >= t.ts && e.ts + e.dur <= t.ts + t.dur;
  return all
    .filter((t) => t.dur > minWallMs * 1000 && !all.some((o) => inside(t, o)))
    .map((t) => {
      const call = onMain.find((e) => e.name === 'FunctionCall' && e.ts >= t.ts && e.ts < t.ts + t.dur);
      return { wallMs: t.dur / 1000, cpuMs: (t.tdur ?? t.dur) / 1000, name: t.name, url: call?.args?.data?.url ?? null };
    });
}

/**
 * Loads a SEPARATE engine instance into the page's main thread (window.__refLab, the single-threaded
 * build) and window.__dumpTrace(trace) -> { [stage]: [{ shape, data: number[] }, ...one per head] },
 * for tests that recompute what the page shows with options of their own.
 */
export async function loadReferenceEngine(page) {
  await page.evaluate(async () => {
    if (!window.__refLab) {
      const { loadAttnLab } = await import(new URL('engine/loader.mjs', document.baseURI).href);
      window.__refLab = await loadAttnLab({ flavour: 'single' });
    }
    window.__dumpTrace = (tr) => {
      const out = {};
      for (const name of tr.stageNames()) {
        const perHead = !['x', 'concat', 'output'].includes(name);
        out[name] = [];
        for (let h = 0; h < (perHead ? tr.numHeads(name) : 1); h++) {
          const t = perHead ? tr.stage(name, h) : tr.stage(name);
          out[name].push({ shape: t.shape, data: Array.from(t.data) });
        }
      }
      return out;
    };
  });
}
