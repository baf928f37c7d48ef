// The browser tests' second browser: Debian's firefox-esr, headless, driven by puppeteer-core over
// WebDriver BiDi (no browser download). support.mjs's launch() calls launchFirefox() when
// ATTNLAB_BROWSER=firefox; the tests then run unchanged, because the page and locator objects
// below answer the part of playwright-core's API the tests use, each method doing what
// playwright's does (wait for the element, then act). A method the tests need and this file lacks
// throws an Error naming it, rather than acting differently.
//
//   ATTNLAB_BROWSER=firefox node --test tests/browser/fallback.test.mjs
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
// puppeteer-core is a dev dependency of web/ (web/package.json), like playwright-core.
const puppeteer = createRequire(join(repoRoot, 'web', 'package.json'))('puppeteer-core');

export const FIREFOX_PATH = '/usr/bin/firefox-esr';
// playwright's default for waits without a timeout.
const DEFAULT_TIMEOUT = 30000;

/** One element selector on a page, resolved at each call (a playwright Locator's subset). */
class Locator {
  constructor(page, selector) {
    this.page = page;
    this.selector = selector;
  }

  // The first matching element once it is attached (and visible when asked).
  async element(visible = false) {
    return this.page.waitForSelector(this.selector, { visible, timeout: DEFAULT_TIMEOUT });
  }

  async read(fn, arg) {
    const h = await this.element();
    try {
      return await h.evaluate(fn, arg);
    } finally {
      await h.dispose();
    }
  }

  async click({ position } = {}) {
    const h = await this.element(true);
    try {
      await h.click(position ? { offset: position } : {});
    } finally {
      await h.dispose();
    }
  }

  async hover() {
    const h = await this.element(true);
    try {
      await h.hover();
    } finally {
      await h.dispose();
    }
  }

  // As playwright's fill: focus, set the whole value at once, one input event.
  fill(value) {
    return this.read((e, v) => {
      e.focus();
      e.value = v;
      e.dispatchEvent(new Event('input', { bubbles: true }));
    }, value);
  }

  // files: { name, mimeType, buffer }, written to a temporary file for the file chooser.
  async setInputFiles({ name, buffer }) {
    const dir = mkdtempSync(join(tmpdir(), 'attnlab-upload-'));
    try {
      writeFileSync(join(dir, name), buffer);
      const h = await this.element();
      try {
        await h.uploadFile(join(dir, name));
      } finally {
        await h.dispose();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  async waitFor({ state = 'visible', timeout = DEFAULT_TIMEOUT } = {}) {
    if (state !== 'visible' && state !== 'attached' && state !== 'hidden') {
      throw new Error(`firefox driver: locator.waitFor state '${state}' is not supported (visible, attached, hidden)`);
    }
    const h = await this.page.waitForSelector(this.selector, { visible: state === 'visible', hidden: state === 'hidden', timeout });
    await h?.dispose();
  }

  // As playwright's: answers at once (no wait); false when nothing matches.
  async isVisible() {
    const h = await this.page.$(this.selector);
    if (!h) return false;
    try {
      return await h.isVisible();
    } finally {
      await h.dispose();
    }
  }

  async boundingBox() {
    const h = await this.element();
    try {
      return await h.boundingBox();
    } finally {
      await h.dispose();
    }
  }

  focus() { return this.read((e) => e.focus()); }
  dispatchEvent(type) { return this.read((e, t) => e.dispatchEvent(new Event(t, { bubbles: true })), type); }
  allTextContents() { return this.page.$$eval(this.selector, (all) => all.map((e) => e.textContent ?? '')); }
  getAttribute(name) { return this.read((e, n) => e.getAttribute(n), name); }
  textContent() { return this.read((e) => e.textContent); }
  inputValue() { return this.read((e) => e.value); }
  isDisabled() { return this.read((e) => e.disabled === true); }
  isEnabled() { return this.read((e) => e.disabled !== true); }
  async count() {
    const all = await this.page.$$(this.selector);
    await Promise.all(all.map((h) => h.dispose()));
    return all.length;
  }
}

/** A puppeteer page behind the part of playwright's Page API the tests use. */
class Page {
  constructor(page) {
    this.page = page;
    this.keyboard = page.keyboard;
    this.mouse = page.mouse;
  }

  goto(url) { return this.page.goto(url, { waitUntil: 'load', timeout: DEFAULT_TIMEOUT }); }
  url() { return this.page.url(); }
  evaluate(fn, arg) { return this.page.evaluate(fn, arg); }
  // playwright: (fn, arg, { timeout, polling }); puppeteer: (fn, { timeout, polling }, ...args).
  waitForFunction(fn, arg, { timeout = DEFAULT_TIMEOUT, polling = 'raf' } = {}) {
    return this.page.waitForFunction(fn, { timeout, polling }, arg);
  }
  $$eval(selector, fn, arg) { return this.page.$$eval(selector, fn, arg); }
  $eval(selector, fn, arg) { return this.page.$eval(selector, fn, arg); }
  locator(selector) { return new Locator(this.page, selector); }
  fill(selector, value) { return this.locator(selector).fill(value); }
  async selectOption(selector, value) {
    await this.locator(selector).element();
    await this.page.select(selector, value);
  }
  // As playwright's: clicks the box only when its state must change.
  async check(selector) {
    if (!(await this.locator(selector).read((e) => e.checked))) await this.locator(selector).click();
  }
  async uncheck(selector) {
    if (await this.locator(selector).read((e) => e.checked)) await this.locator(selector).click();
  }
  waitForTimeout(ms) { return new Promise((r) => setTimeout(r, ms)); }
  screenshot(options) { return this.page.screenshot(options); }
  setViewportSize({ width, height }) { return this.page.setViewport({ width, height }); }
  // console (type(), text()), pageerror, requestfailed (url(), failure()), response (status(), url()):
  // puppeteer's events carry the same names and methods.
  on(event, handler) {
    if (!['console', 'pageerror', 'requestfailed', 'response'].includes(event)) {
      throw new Error(`firefox driver: page.on('${event}') is not supported (console, pageerror, requestfailed, response)`);
    }
    this.page.on(event, handler);
    return this;
  }
  waitForEvent(event) {
    throw new Error(`firefox driver: page.waitForEvent('${event}') is not supported: puppeteer has no download events over WebDriver BiDi`);
  }
}

/**
 * Starts headless firefox-esr with a fresh profile folder and returns a playwright-like persistent
 * context: { pages(), newPage(), close() }.
 */
export async function launchFirefox(profile, { viewport }) {
  const browser = await puppeteer.launch({
    browser: 'firefox',
    protocol: 'webDriverBiDi',
    executablePath: FIREFOX_PATH,
    headless: true,
    userDataDir: profile,
    defaultViewport: viewport,
  });
  const wrapped = new Map();
  const wrap = (p) => {
    if (!wrapped.has(p)) wrapped.set(p, new Page(p));
    return wrapped.get(p);
  };
  const first = (await browser.pages())[0] ?? (await browser.newPage());
  return {
    browser,
    pages: () => [...new Set([first, ...wrapped.keys()])].filter((p) => !p.isClosed()).map(wrap),
    newPage: async () => wrap(await browser.newPage()),
    close: () => browser.close(),
  };
}
