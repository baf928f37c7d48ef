#!/usr/bin/env node
// Takes docs/screenshots/chapter-<n>-<en|zh>.png: every chapter of the page's Chapters tab in both
// languages, after its figures are drawn from engine data (headless Debian chromium through
// playwright-core; build the page first with scripts/build_wasm.sh and scripts/build_web.sh).
//
//   node scripts/chapter_screenshots.mjs            all chapters, both languages
//   node scripts/chapter_screenshots.mjs 4 6        only chapters 4 and 6
//   node scripts/chapter_screenshots.mjs --width=390 --out=artifacts/phone
//                                                   a phone's width, into another folder
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mkdtempSync, rmSync } from 'node:fs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { chromium } = createRequire(join(root, 'web', 'package.json'))('playwright-core');
const { startServer } = await import(join(root, 'scripts', 'serve.mjs'));

const option = (name) => process.argv.slice(2).find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const chapters = process.argv.slice(2).filter((a) => !a.startsWith('--')).map(Number);
const which = chapters.length ? chapters : [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
const width = Number(option('width') ?? 1280);
if (!(width >= 320 && width <= 3840)) throw new Error(`--width must be 320..3840 px, got '${option('width')}'`);
const out = option('out') ? join(process.cwd(), option('out')) : join(root, 'docs', 'screenshots');
mkdirSync(out, { recursive: true });

const { server, url } = await startServer({ port: 0, dir: join(root, 'web', 'dist'), isolation: true });
const profile = mkdtempSync(join(tmpdir(), 'attnlab-shots-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: '/usr/bin/chromium', headless: true, viewport: { width, height: 900 }, ...(width < 600 ? { isMobile: true, hasTouch: true, deviceScaleFactor: 1 } : {}),
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
});
try {
  const page = context.pages()[0] ?? (await context.newPage());
  for (const lang of ['en', 'zh']) {
    for (const n of which) {
      await page.goto(`${url}?view=chapters&chapter=${n}&lang=${lang}`);
      await page.waitForFunction(() => {
        const s = window.__attnlab?.chapters?.();
        return s && Object.values(s.figures).every((f) => f === 'ready') && !document.querySelector('section.experiment:not([data-available="1"]):not([data-available="0"])');
      }, null, { timeout: 60000, polling: 100 });
      if (n === 4) {
        // One experiment run to its result: the quick permutation check takes about a second.
        await page.locator('section.experiment[data-experiment="permutation"] button[data-act="run"]').click();
        await page.waitForFunction(() => document.querySelector('section.experiment[data-experiment="permutation"]').dataset.phase === 'done', null, { timeout: 60000 });
      }
      await page.evaluate(() => new Promise((r) => setTimeout(r, 600))); // d3 transitions end
      await page.evaluate(() => window.scrollTo(0, 0)); // the sticky header and contents sit at the top
      await page.mouse.move(1, 1); // no hover tooltip left where a button was clicked
      const file = join(out, `chapter-${n}-${lang}.png`);
      await page.screenshot({ path: file, fullPage: true });
      console.log(file);
    }
  }
} finally {
  await context.close();
  server.close();
  rmSync(profile, { recursive: true, force: true });
}
