// The page survives its engine: when the engine worker ends (closed, an uncaught error in it, or a
// WebAssembly trap in the engine) the lab says so, a new worker starts, and the settings and the curves drawn so far stay; a model
// or batch larger than the engine's memory budget shows the engine's own message.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { BROWSER, labUrl, launch, openLab, waitForLabPhase, waitForLabSteps, waitForLabDone } from './support.mjs';

const SETTINGS = { task: 'reverse', length: 4, vocab: 6, layers: 1, dModel: 16, heads: 2, kvHeads: 2, steps: 5000, seed: 3 };
let b;
let page;
before(async () => {
  ({ b, page } = await openLab(SETTINGS));
});
after(async () => {
  await b?.close();
});

/** Engine workers this file ended: Playwright may list one for a moment after it ended. */
const ended = new Set();

/** The page's engine worker (not the pthread workers it starts): its script is the bundled worker. */
async function engineWorker() {
  const engines = () => page.workers().filter((x) => /\/assets\/worker-[^/]*\.js$/.test(x.url()) && !ended.has(x));
  for (let i = 0; i < 100 && engines().length !== 1; i++) await page.waitForTimeout(100);
  assert.equal(engines().length, 1, `one engine worker, found: ${page.workers().map((x) => x.url()).join(', ')}`);
  return engines()[0];
}

/** Makes the engine worker run `fn`, which ends it sooner or later; does not wait for an answer. */
async function endEngineWorker(fn) {
  const w = await engineWorker();
  ended.add(w);
  w.evaluate(fn).catch(() => {});
}

// These tests end the worker by running code in it. Firefox's WebDriver BiDi lists the page's
// workers but refuses to run a script in one (script.callFunction: "no such frame"), so in Firefox
// they are skipped; the memory-budget tests, which need no worker access, run in both browsers.
const inWorker = BROWSER === 'firefox' ? { skip: 'Firefox WebDriver BiDi cannot run a script in a worker' } : {};

const banner = () => page.locator('.lab-banner').textContent();
const formValue = (name) => page.locator(`.lab [name="${name}"]`).inputValue();

test('the worker ending mid-run: the lab says so, restarts the engine, keeps settings and curves', inWorker, async () => {
  await page.locator('.lab button[data-act="train"]').click();
  await waitForLabSteps(page, 5); // few: on a loaded machine a long run pauses after its first steps (LONG_RUN_SECONDS)
  const before = await page.evaluate(() => window.__attnlab.lab().metrics.length);
  await endEngineWorker(() => self.close());
  await page.waitForFunction(() => /The engine stopped and was restarted/.test(document.querySelector('.lab-banner').textContent), null, { timeout: 60000 });
  assert.match(await banner(), /the settings and the curves drawn so far are kept, the model is not \(Train builds a new one\)/);
  const s = await page.evaluate(() => window.__attnlab.lab());
  assert.equal(s.phase, 'idle');
  assert.equal(s.model, null);
  assert.ok(s.metrics.length >= before, `curve kept: ${s.metrics.length} points, ${before} before the end`);
  assert.ok(await page.locator('.lab svg path').count() > 0, 'the curve is still drawn');
  assert.equal(await formValue('dModel'), '16');
  assert.equal(await formValue('seed'), '3');
  assert.match(await page.locator('[data-engine-badge]').textContent(), /^engine: /);

  // The new engine trains: a short run from a fresh model.
  await page.locator('.lab input[name="steps"]').fill('20');
  await page.locator('.lab input[name="steps"]').dispatchEvent('change');
  await page.locator('.lab button[data-act="train"]').click();
  await waitForLabDone(page);
  assert.equal((await page.evaluate(() => window.__attnlab.lab().metrics)).length, 20);
});

test('a request the ending worker never answered rejects with a clear message', inWorker, async () => {
  // The worker closes on receiving the Try request, instead of handing it to its own handler.
  const w = await engineWorker();
  await w.evaluate(() => {
    const handler = self.onmessage;
    self.onmessage = (ev) => (ev.data?.body?.kind === 'lab.try' ? self.close() : handler.call(self, ev));
  });
  ended.add(w);
  await page.locator('form.try input[name="prompt"]').fill('1 2 3 4 |');
  await page.locator('form.try button[data-act="try"]').click();
  await page.waitForFunction(() => document.querySelector('.try-out').textContent !== '', null, { timeout: 60000 });
  assert.match(await page.locator('.try-out').textContent(), /^The engine could not run that: the engine stopped \(the engine worker ended\); it is restarting$/);
  await page.waitForFunction(() => /was restarted/.test(document.querySelector('.lab-banner').textContent), null, { timeout: 60000 });
});

test('an uncaught error in the worker: the same recovery, and the walkthrough computes again', inWorker, async () => {
  const curve = await page.evaluate(() => window.__attnlab.lab().metrics.length);
  await endEngineWorker(() => setTimeout(() => { throw new Error('forced by engine_recovery.test.mjs'); }));
  await page.waitForFunction(() => window.__attnlab.lab().error?.details?.includes('forced by engine_recovery.test.mjs'), null, { timeout: 60000 });
  await page.waitForFunction(() => /was restarted/.test(document.querySelector('.lab-banner').textContent), null, { timeout: 60000 });
  assert.equal(await page.evaluate(() => window.__attnlab.lab().metrics.length), curve, 'the finished curve is kept');
  await page.locator('nav.tabs button[data-view="walk"]').click();
  await page.waitForFunction(() => window.__attnlab.walk().status === 'ready', null, { timeout: 60000 });
});

/** Opens the lab with these settings and presses Train. */
async function trainWith(settings) {
  await page.goto(new URL(page.url()).origin + '/' + labUrl(settings));
  await page.evaluate(() => window.__attnlab.ready);
  await waitForLabPhase(page, 'idle');
  await page.locator('.lab button[data-act="train"]').click();
}

async function refusal() {
  await page.waitForFunction(() => /The engine refused these settings/.test(document.querySelector('.lab-banner').textContent), null, { timeout: 60000 });
  return page.locator('.lab-banner .details pre').textContent();
}

test('a model over the engine memory budget shows the engine message', async () => {
  await trainWith({ task: 'reverse', length: 4, vocab: 6, layers: 16, dModel: 4096, heads: 4, kvHeads: 4, steps: 10 });
  assert.match(await refusal(), /over the budget of \d+ MiB/);
});

test('a batch whose activations exceed the engine memory budget shows the engine message', async () => {
  await trainWith({ task: 'char_lm', length: 64, layers: 2, dModel: 256, heads: 4, kvHeads: 4, batch: 20000, steps: 5 });
  assert.match(await refusal(), /activations needs \d+ floats \(\d+ MiB\), over the budget of \d+ floats/);
  // The refusal left the engine working: a small model trains.
  await trainWith({ task: 'reverse', length: 4, vocab: 6, layers: 1, dModel: 16, heads: 2, kvHeads: 2, steps: 10 });
  await waitForLabDone(page);
});

test('a WebAssembly trap in the engine: the lab says so, restarts the engine, keeps settings and curves', inWorker, async () => {
  // A fresh page: the client gives up after MAX_RESTARTS restarts within a minute
  // (engine/client.ts), and the tests above restarted this page's engine three times already.
  await b.close();
  ({ b, page } = await openLab({ ...SETTINGS, steps: 20 }));
  await page.locator('.lab button[data-act="train"]').click();
  await waitForLabDone(page);
  const curve = await page.evaluate(() => window.__attnlab.lab().metrics.length);
  assert.equal(curve, 20, 'a finished curve to keep');
  // The worker's test-only request makes the engine execute `unreachable` (web/bindings/module.cpp):
  // a trap, not an exception, which leaves the module unusable.
  await endEngineWorker(() => self.onmessage(new MessageEvent('message', { data: { id: 0, body: { kind: 'test.trap' } } })));
  await page.waitForFunction(() => /unreachable/.test(window.__attnlab.lab().error?.details ?? ''), null, { timeout: 60000 });
  await page.waitForFunction(() => /The engine stopped and was restarted/.test(document.querySelector('.lab-banner').textContent), null, { timeout: 60000 });
  assert.equal(await page.evaluate(() => window.__attnlab.lab().metrics.length), curve, 'the finished curve is kept');
  assert.ok(await page.locator('.lab svg path').count() > 0, 'the curve is still drawn');
  assert.equal(await formValue('dModel'), '16');
  assert.equal(await formValue('seed'), '3');
  // The new engine trains.
  await page.locator('.lab button[data-act="train"]').click();
  await waitForLabDone(page);
  assert.deepEqual(b.problems, []);
});

// A starting worker that blocks for good (as firefox-esr's does now and then under remote control,
// inside a `new Worker` call) sends no more beats: the page replaces it (engine/client.ts). Here the
// engine's loader, served as a wait that nothing ends, blocks the worker the same way: the thread
// sleeps in Atomics.wait (the page is cross-origin isolated, so the worker has SharedArrayBuffer)
// rather than spinning, so the blocked starts cost no CPU time.
const routing = BROWSER === 'firefox' ? { skip: 'the Firefox driver does not route requests' } : {};
const BLOCKING_LOADER = 'Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);';

async function pageWithBlockingLoader(blockedStarts) {
  const c = await launch();
  const p = c.context.pages()[0] ?? (await c.context.newPage());
  let served = 0;
  await p.route('**/engine/loader.mjs', (route) => {
    if (served++ < blockedStarts) return route.fulfill({ status: 200, contentType: 'text/javascript', body: BLOCKING_LOADER });
    return route.continue();
  });
  p.on('pageerror', (e) => c.problems.push(`page error: ${e.message}`));
  const t0 = Date.now();
  await p.goto(c.url + labUrl(SETTINGS));
  return { c, p, t0, served: () => served };
}

test('a worker that blocks while starting is replaced, and the engine starts', routing, async () => {
  const { c, p, t0, served } = await pageWithBlockingLoader(1);
  try {
    const info = await p.evaluate(() => window.__attnlab.ready);
    assert.equal(info.flavour, 'threads');
    assert.equal(served(), 2, 'the blocked worker was replaced once');
    assert.ok(Date.now() - t0 >= 3000, 'replaced after its silence, not before');
    await waitForLabPhase(p, 'idle');
    await p.locator('.lab button[data-act="train"]').click();
    await waitForLabSteps(p, 1);
    assert.deepEqual(c.problems, []);
  } finally {
    await c.close();
  }
});

test('a worker that blocks on every start: after six the page says the engine could not start', routing, async () => {
  const { c, p, served } = await pageWithBlockingLoader(Infinity);
  try {
    const error = await p.evaluate(() => window.__attnlab.ready.then(() => 'started', (e) => e.message));
    assert.equal(error, 'the engine worker fell silent while starting, 6 times in a row');
    assert.equal(served(), 6);
    await p.waitForFunction(() => document.querySelector('[data-engine-badge]').dataset.flavour === 'none', null, { timeout: 10000 });
    assert.match(await p.evaluate(() => window.__attnlab.walk().error), /fell silent while starting, 6 times in a row/);
  } finally {
    await c.close();
  }
});
