// The shapes task in the lab: a ViT and a Swin train on images, and the attention drawn over the
// held-out images equals the engine's: each drawn patch's weight is Model.attentionMaps(image,
// {layer}) of the saved checkpoint (loaded into a separate engine in the page) for the shown
// window, head and query, and sits on the patch Model.windowLayout places it at.
//   node --test tests/browser/lab_shapes.test.mjs
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { BROWSER, loadReferenceEngine, openLab, screenshot, traceMainThreadTasks, waitForLabDone } from './support.mjs';

const STEPS = 20;
const SETTINGS = { task: 'shapes', architecture: 'vit', length: 16, vocab: 4, layers: 1, dModel: 16, heads: 2, kvHeads: 2, norm: 'pre', scale: 1, lr: 0.003, batch: 16, steps: STEPS, seed: 1 };
let b;
let page;
before(async () => {
  ({ b, page } = await openLab(SETTINGS));
});
after(async () => {
  await b?.close();
});

/**
 * Trains the form's model until its picture shows the last step; in Chromium, no main-thread task
 * of the run (drawing the images and their attention included) takes over 50 ms of CPU.
 */
async function train() {
  const run = async () => {
    await page.locator('.lab button[data-act="train"]').click();
    await waitForLabDone(page, 120000);
    await page.waitForFunction((n) => window.__attnlab.lab().picture?.step === n, STEPS);
  };
  if (BROWSER !== 'chromium') return run();
  const long = (await traceMainThreadTasks(page, run)).filter((k) => k.cpuMs > 50);
  assert.deepEqual(long, [], 'no main-thread task over 50 ms of CPU');
}

/** Compares every drawn weight of attention layer `layer` with the engine's maps of the model's checkpoint. */
async function compare(layer) {
  const [download] = await Promise.all([page.waitForEvent('download'), page.locator('.lab button[data-act="save"]').click()]);
  const bytes = Array.from(readFileSync(await download.path()));
  await loadReferenceEngine(page);
  const ref = await page.evaluate(async ({ bytes, s, layer }) => {
    const lab = window.__refLab;
    const model = lab.Model.load(Uint8Array.from(bytes));
    const task = new lab.Task('shapes', { length: s.length, vocab: s.vocab, seed: s.seed });
    const pixels = task.sample(4, 0xe7a1).pixels;
    const maps = [0, 1, 2, 3].map((i) => {
      const m = model.attentionMaps(pixels, { layer, batch: i });
      return { shape: m.shape, data: Array.from(m.data) };
    });
    const layout = { ...model.windowLayout(layer) };
    model.delete();
    task.delete();
    return { maps, layout, pixels: Array.from(pixels.data) };
  }, { bytes, s: SETTINGS, layer });
  const shown = await page.evaluate(() => Array.from(window.__attnlab.lab().picture.images[0].pixels));
  assert.deepEqual(shown, ref.pixels.slice(0, shown.length), 'the images are the task\'s held-out sample');
  const drawn = await page.$$eval('section.lab-picture figure.picture-image svg.picture-attn', (svgs) =>
    svgs.map((s) => ({
      w: Number(s.dataset.window), q: Number(s.dataset.query), h: Number(s.dataset.head), layer: Number(s.dataset.layer),
      cells: Array.from(s.querySelectorAll('rect.patch.in-window')).map((r) => ({ k: Number(r.dataset.k), w: Number(r.dataset.w), patch: r.dataset.patch })),
    })));
  assert.equal(drawn.length, 4);
  const l = ref.layout;
  for (const [i, d] of drawn.entries()) {
    assert.equal(d.layer, layer);
    const [, H, M2] = ref.maps[i].shape;
    assert.equal(d.cells.length, M2 - (l.cls ? 1 : 0), `image ${i}: every patch of the window is drawn`);
    for (const c of d.cells) {
      const engine = ref.maps[i].data[((d.w * H + d.h) * M2 + d.q) * M2 + c.k];
      assert.ok(Math.abs(c.w - engine) <= 1e-6, `image ${i} key ${c.k}: drawn ${c.w}, engine ${engine}`);
      // Key k of window w sits at the patch Model.windowLayout's formula gives.
      const p = c.k - (l.cls ? 1 : 0);
      const wy = Math.floor(d.w / l.windowsPerSide), wx = d.w % l.windowsPerSide;
      assert.equal(c.patch, `${(wy * l.window + Math.floor(p / l.window) + l.shift) % l.grid},${(wx * l.window + (p % l.window) + l.shift) % l.grid}`);
    }
  }
  return { drawn, layout: l };
}

test('a ViT trains on shapes; the CLS query\'s weights drawn over the images are the engine\'s', async () => {
  await train();
  const { drawn, layout } = await compare(0);
  assert.equal(layout.cls, true);
  assert.ok(drawn.every((d) => d.q === 0), 'the CLS row by default');
  // Clicking a patch makes it the query: the drawn row follows (index 1 + 4·r + c after the CLS token).
  await page.locator('section.lab-picture figure[data-image="0"] rect[data-patch="1,2"]').click();
  await page.waitForFunction(() => document.querySelector('section.lab-picture svg.picture-attn').dataset.query === '7');
  await compare(0);
  await page.locator('section.lab-picture').scrollIntoViewIfNeeded();
  await screenshot(page, 'lab-shapes-vit');
});

test('a Swin trains; a shifted layer\'s window weights drawn over the images are the engine\'s', async () => {
  // Two blocks per stage: the second of stage 0 shifts its windows.
  await page.locator('select[name="architecture"]').selectOption('swin');
  await page.locator('select[name="layers"]').selectOption('2');
  await train();
  // Layer 1 is stage 0's shifted block; patch (0, 0) then shares a window rolled in from the far edges.
  await page.locator('section.lab-picture select[name="picLayer"]').selectOption('1');
  await page.locator('section.lab-picture figure[data-image="0"] rect[data-patch="0,0"]').click();
  await page.waitForFunction(() => document.querySelector('section.lab-picture svg.picture-attn').dataset.layer === '1');
  const { drawn, layout } = await compare(1);
  assert.ok(layout.shift > 0, 'layer 1 is shifted');
  assert.equal(layout.cls, false);
  assert.ok(drawn.every((d) => d.cells.some((c) => c.patch === '0,0')), 'the query\'s own window is drawn');
  await page.locator('section.lab-picture').scrollIntoViewIfNeeded();
  await screenshot(page, 'lab-shapes-swin');
});

test('no console errors or failed requests', () => {
  assert.deepEqual(b.problems, []);
});
