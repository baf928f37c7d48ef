// The browser tests' second browser: Debian's firefox-esr, headless, driven by puppeteer-core over
// WebDriver BiDi (no browser download). support.mjs's launch() calls launchFirefox() when
// ATTNLAB_BROWSER=firefox; the tests then run unchanged, because the page and locator objects
// below answer the part of playwright-core's API the tests use, each method doing what
// playwright's does (wait for the element, then act). A method the tests need and this file lacks
// throws an Error naming it, rather than acting differently.
//
//   ATTNLAB_BROWSER=firefox node --test tests/browser/fallback.test.mjs
import { cpSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
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

// Values cross between Node and the page as tagged JSON, as playwright's own evaluate does it:
// NaN, ±Infinity, -0 and undefined, typed arrays (by kind), dates and shared references keep
// their identity; a DOM node becomes 'ref: <Node>'. puppeteer's BiDi deserialiser refuses some of
// the page's objects (the lab's store) and returns typed arrays as plain objects.
function pack(value, seen = new Map()) {
  if (value === undefined) return { u: 1 };
  if (typeof value === 'number') {
    if (Number.isNaN(value)) return { n: 'NaN' };
    if (!Number.isFinite(value)) return { n: value > 0 ? 'Infinity' : '-Infinity' };
    return Object.is(value, -0) ? { n: '-0' } : value;
  }
  if (typeof value === 'bigint') return { bi: String(value) };
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return value;
  if (typeof value !== 'object') return { u: 1 };
  if (typeof Node === 'function' && value instanceof Node) return 'ref: <Node>';
  if (seen.has(value)) return { ref: seen.get(value) };
  const id = seen.size + 1;
  seen.set(value, id);
  if (ArrayBuffer.isView(value) && !(value instanceof DataView)) return { ta: value.constructor.name, v: Array.from(value, (x) => pack(x, seen)) };
  if (value instanceof Date) return { d: value.toJSON() };
  if (value instanceof RegExp) return { re: [value.source, value.flags] };
  if (value instanceof Error) return { e: [value.name, value.message, value.stack ?? ''] };
  if (Array.isArray(value)) return { id, a: value.map((x) => pack(x, seen)) };
  const o = {};
  for (const k of Object.keys(value)) if (typeof value[k] !== 'function') o[k] = pack(value[k], seen);
  return { id, o };
}

function unpack(value, refs = new Map()) {
  if (value === null || typeof value !== 'object') return value;
  if ('u' in value) return undefined;
  if ('n' in value) return Number(value.n);
  if ('bi' in value) return BigInt(value.bi);
  if ('ref' in value) return refs.get(value.ref);
  if ('ta' in value) return globalThis[value.ta].from(value.v.map((x) => unpack(x, refs)));
  if ('d' in value) return new Date(value.d);
  if ('re' in value) return new RegExp(...value.re);
  if ('e' in value) return Object.assign(new Error(value.e[1]), { name: value.e[0], stack: value.e[2] });
  if ('a' in value) {
    const a = [];
    refs.set(value.id, a);
    for (const x of value.a) a.push(unpack(x, refs));
    return a;
  }
  const o = {};
  refs.set(value.id, o);
  for (const [k, x] of Object.entries(value.o)) o[k] = unpack(x, refs);
  return o;
}

// page.evaluate(fn, arg) as one expression: the page unpacks the argument, awaits fn and packs its result.
function evaluateExpression(fn, arg) {
  const packed = JSON.stringify(JSON.stringify(pack(arg)));
  return `(async () => { const pack = ${pack}; const unpack = ${unpack};
    return JSON.stringify(pack(await (${fn})(unpack(JSON.parse(${packed}))))); })()`;
}

// playwright's visibility of an element: a non-empty box, rendered (checkVisibility: not inside a
// closed <details>, whose content Firefox lays out but skips drawing) and not 'visibility: hidden'.
const isShown = (e) => {
  const r = e.getBoundingClientRect();
  return r.width > 0 && r.height > 0 && e.checkVisibility({ visibilityProperty: true });
};

// Focus emulation, as playwright's Firefox has it: a headless firefox-esr window never holds the
// focus, so focus moves (element.focus(), Tab, a click) change document.activeElement but fire no
// focus, blur, focusin or focusout. Around each action that can move the focus the driver notes
// the focused element (armFocus) and, if it changed and the browser fired no focusin, fires the
// events a focused window would (settleFocus). Both run in the page, as expression sources.
function armFocus() {
  const s = { before: document.activeElement, fired: false };
  s.mark = () => { s.fired = true; };
  addEventListener('focusin', s.mark, true);
  window.__attnlabDriverFocus = s;
}
function settleFocus() {
  const s = window.__attnlabDriverFocus;
  if (!s) return;
  delete window.__attnlabDriverFocus;
  removeEventListener('focusin', s.mark, true);
  const now = document.activeElement;
  if (s.fired || now === s.before) return;
  const real = (e) => e && e !== document.body && e !== document.documentElement;
  if (real(s.before) && s.before.isConnected) {
    s.before.dispatchEvent(new FocusEvent('blur', { relatedTarget: now }));
    s.before.dispatchEvent(new FocusEvent('focusout', { bubbles: true, relatedTarget: now }));
  }
  if (real(now)) {
    now.dispatchEvent(new FocusEvent('focus', { relatedTarget: s.before }));
    now.dispatchEvent(new FocusEvent('focusin', { bubbles: true, relatedTarget: s.before }));
  }
}
// The point a click on element e lands on, in viewport pixels (offset: from its top left corner;
// else its middle), or null while it cannot be clicked there. Into the middle of the viewport
// first: puppeteer clicks at the element's point wherever it scrolled it, which the page's sticky
// header may cover. The box must be the same over two animation frames (playwright's "stable"):
// a figure that finishes loading above a button moves the button between reading its point and
// clicking it, and the click would land on whatever is there then. And the point must hit the
// element or a descendant (playwright's "receives events"), not a header or a tooltip over it.
async function stablePoint(e, offset) {
  e.scrollIntoView({ block: 'center', inline: 'center' });
  if (offset) {
    // A point near the corner of an element taller than the viewport: that point into view.
    const r = e.getBoundingClientRect();
    const x = r.x + offset.x, y = r.y + offset.y;
    if (x < 0 || y < 0 || x >= innerWidth || y >= innerHeight) scrollBy(x - innerWidth / 2, y - innerHeight / 2);
  }
  const frame = () => new Promise((r) => { requestAnimationFrame(() => r()); setTimeout(r, 100); });
  const a = e.getBoundingClientRect();
  await frame();
  await frame();
  const b = e.getBoundingClientRect();
  if (a.x !== b.x || a.y !== b.y || a.width !== b.width || a.height !== b.height || !b.width || !b.height) return null;
  const x = b.x + (offset ? offset.x : b.width / 2), y = b.y + (offset ? offset.y : b.height / 2);
  const hit = document.elementFromPoint(x, y);
  return hit && (hit === e || e.contains(hit)) ? { x, y } : null;
}
const ARM_FOCUS = `(${armFocus})()`;
const SETTLE_FOCUS = `(${settleFocus})()`;

/** One element selector on a page, resolved at each call (a playwright Locator's subset). */
class Locator {
  constructor(page, selector, { firstOnly = false } = {}) {
    this.page = page;
    // first(): the first match only (count() is then 0 or 1).
    this.firstOnly = firstOnly;
    // playwright's ':visible' (CSS has no such pseudo-class) filters the matches to the visible
    // ones: a non-empty box and no 'visibility: hidden', as playwright decides it.
    this.visibleOnly = /:visible$/.test(selector);
    this.selector = this.visibleOnly ? selector.slice(0, -':visible'.length) : selector;
  }

  // The elements this locator matches now, as element handles.
  async all() {
    const all = await this.page.$$(this.selector);
    let shown = all;
    if (this.visibleOnly) {
      shown = [];
      for (const h of all) {
        if (await h.evaluate(isShown)) shown.push(h);
        else await h.dispose();
      }
    }
    if (!this.firstOnly) return shown;
    await Promise.all(shown.slice(1).map((h) => h.dispose()));
    return shown.slice(0, 1);
  }

  // The first matching element once it is attached (and visible when asked).
  async element(visible = false) {
    if (!this.visibleOnly) return this.page.waitForSelector(this.selector, { visible, timeout: DEFAULT_TIMEOUT });
    for (const end = Date.now() + DEFAULT_TIMEOUT; ; await new Promise((r) => setTimeout(r, 50))) {
      const [first, ...rest] = await this.all();
      await Promise.all(rest.map((h) => h.dispose()));
      if (first) return first;
      if (Date.now() > end) throw new Error(`firefox driver: no visible element matches '${this.selector}' after ${DEFAULT_TIMEOUT} ms`);
    }
  }

  async read(fn, arg) {
    const h = await this.element();
    try {
      return await h.evaluate(fn, arg);
    } finally {
      await h.dispose();
    }
  }

  // As playwright clicks: at a point of the element that holds still and hits it (see
  // stablePoint), found again until DEFAULT_TIMEOUT; the mouse then clicks that point.
  async click({ position } = {}) {
    const h = await this.element(true);
    try {
      let point = null;
      for (const end = Date.now() + DEFAULT_TIMEOUT; !point; await new Promise((r) => setTimeout(r, 50))) {
        point = await h.evaluate(stablePoint, position ?? null);
        if (!point && Date.now() > end) throw new Error(`firefox driver: '${this.selector}' did not hold still under the mouse for ${DEFAULT_TIMEOUT} ms (moving, covered or outside the page)`);
      }
      await this.page.evaluate(ARM_FOCUS);
      await this.page.mouse.click(point.x, point.y);
      await this.page.evaluate(SETTLE_FOCUS);
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

  // files: { name, mimeType, buffer } or an array of them (an <input multiple>), written to
  // temporary files for the file chooser.
  async setInputFiles(files) {
    // Firefox hands the page a File that reads the path lazily, after uploadFile returns: the
    // files must outlive the call, so they stay until the browser closes.
    const dir = mkdtempSync(join(tmpdir(), 'attnlab-upload-'));
    tempDirs.push(dir);
    const paths = (Array.isArray(files) ? files : [files]).map(({ name, buffer }) => {
      writeFileSync(join(dir, name), buffer);
      return join(dir, name);
    });
    const h = await this.element();
    try {
      await h.uploadFile(...paths);
    } finally {
      await h.dispose();
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
    const all = await this.all();
    if (all.length === 0) return false;
    try {
      return await all[0].evaluate(isShown);
    } finally {
      await Promise.all(all.map((h) => h.dispose()));
    }
  }

  async isHidden() { return !(await this.isVisible()); }

  async selectOption(value) {
    const h = await this.element();
    try {
      await h.select(value);
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

  // A CSS descendant of this locator's match (both CSS selectors, as the tests write them).
  locator(selector) {
    if (this.visibleOnly || this.firstOnly) throw new Error(`firefox driver: locator('${this.selector}').${this.firstOnly ? 'first()' : ':visible'}.locator() is not supported`);
    return new Locator(this.page, `${this.selector} ${selector}`);
  }
  first() { return new Locator(this.page, this.selector + (this.visibleOnly ? ':visible' : ''), { firstOnly: true }); }
  async evaluateAll(fn, arg) {
    if (this.visibleOnly || this.firstOnly) throw new Error(`firefox driver: evaluateAll on '${this.selector}' with :visible or first() is not supported`);
    return this.page.$$eval(this.selector, fn, arg);
  }
  isChecked() { return this.read((e) => e.checked === true); }
  // As playwright's: clicks the box only when its state must change.
  async check() { if (!(await this.isChecked())) await this.click(); }
  async uncheck() { if (await this.isChecked()) await this.click(); }
  // As playwright's: scrolls only when the element is not fully in view.
  scrollIntoViewIfNeeded() {
    return this.read((e) => {
      const r = e.getBoundingClientRect();
      if (r.top < 0 || r.left < 0 || r.bottom > innerHeight || r.right > innerWidth) e.scrollIntoView({ block: 'center', inline: 'center' });
    });
  }
  // options: { path } as playwright's (a PNG of the element's box).
  async screenshot(options = {}) {
    const h = await this.element(true);
    try {
      return await h.screenshot({ ...options, scrollIntoView: true });
    } finally {
      await h.dispose();
    }
  }
  evaluate(fn, arg) { return this.read(fn, arg); }
  async focus() {
    await this.page.evaluate(ARM_FOCUS);
    await this.read((e) => e.focus());
    await this.page.evaluate(SETTLE_FOCUS);
  }
  dispatchEvent(type) { return this.read((e, t) => e.dispatchEvent(new Event(t, { bubbles: true })), type); }
  async allTextContents() {
    const all = await this.all();
    try {
      return await Promise.all(all.map((h) => h.evaluate((e) => e.textContent ?? '')));
    } finally {
      await Promise.all(all.map((h) => h.dispose()));
    }
  }
  getAttribute(name) { return this.read((e, n) => e.getAttribute(n), name); }
  textContent() { return this.read((e) => e.textContent); }
  inputValue() { return this.read((e) => e.value); }
  isDisabled() { return this.read((e) => e.disabled === true); }
  isEnabled() { return this.read((e) => e.disabled !== true); }
  async count() {
    const all = await this.all();
    await Promise.all(all.map((h) => h.dispose()));
    return all.length;
  }
}

/** A caught download (playwright's Download): its file name and bytes, written to a file on request. */
class Download {
  constructor(name, bytes) {
    this.name = name;
    this.bytes = bytes;
  }

  suggestedFilename() { return this.name; }

  async path() {
    const dir = mkdtempSync(join(tmpdir(), 'attnlab-download-'));
    tempDirs.push(dir);
    writeFileSync(join(dir, this.name), this.bytes);
    return join(dir, this.name);
  }
}
// Folders of uploads and of downloads written by path(), removed when the browser closes.
const tempDirs = [];

/**
 * playwright's Keyboard over puppeteer's. firefox-esr over WebDriver BiDi delivers Enter and Space
 * as trusted key events but leaves out the activation a focused control performs on them (a
 * button's click; Tab and text input work). So after such a key, when the focused element is one
 * a key activates, no click followed and no handler prevented the key's default, this does what
 * HTML specifies for it: the element's click(). playwright's key name 'Space' is puppeteer's ' '.
 */
class Keyboard {
  constructor(page) {
    this.page = page;
    this.keyboard = page.keyboard;
  }

  async press(key, options) {
    await this.page.evaluate(ARM_FOCUS);
    await this.pressActivating(key, options);
    await this.page.evaluate(SETTLE_FOCUS);
  }

  // playwright's 'Control+a': the modifiers held down around the key.
  async pressCombination(key, options) {
    const parts = key.length > 1 ? key.split('+') : [key];
    const k = parts.pop() || '+';
    for (const m of parts) await this.keyboard.down(m);
    try {
      await this.keyboard.press(k === 'Space' ? ' ' : k, options);
    } finally {
      for (const m of parts.reverse()) await this.keyboard.up(m);
    }
  }

  async pressActivating(key, options) {
    const k = key === 'Space' ? ' ' : key;
    if (k !== 'Enter' && k !== ' ') return this.pressCombination(key, options);
    await this.page.evaluate(() => {
      const seen = { click: false, prevented: false, target: document.activeElement };
      window.__attnlabKeyActivation = seen;
      const click = () => { seen.click = true; };
      addEventListener('click', click, true);
      // Last in the bubbling order (window), so the page's own key handlers have run.
      const key = (e) => { if (e.defaultPrevented) seen.prevented = true; };
      addEventListener('keydown', key);
      addEventListener('keyup', key);
      seen.stop = () => {
        removeEventListener('click', click, true);
        removeEventListener('keydown', key);
        removeEventListener('keyup', key);
      };
    });
    await this.keyboard.press(k, options);
    await this.page.evaluate((space) => {
      const seen = window.__attnlabKeyActivation;
      delete window.__attnlabKeyActivation;
      seen.stop();
      const e = seen.target;
      if (seen.click || seen.prevented || !e || e !== document.activeElement || e.disabled) return;
      const type = e.localName === 'input' ? e.type : null;
      const activates = space
        ? e.localName === 'button' || e.localName === 'summary' || ['button', 'submit', 'reset', 'checkbox', 'radio'].includes(type)
        : e.localName === 'button' || e.localName === 'summary' || ['button', 'submit', 'reset'].includes(type) || (e.localName === 'a' && e.hasAttribute('href'));
      if (activates) e.click();
    }, k === ' ');
  }

  down(key) { return this.keyboard.down(key === 'Space' ? ' ' : key); }
  up(key) { return this.keyboard.up(key === 'Space' ? ' ' : key); }
  type(text, options) { return this.keyboard.type(text, options); }
  insertText(text) { return this.keyboard.sendCharacter(text); }
}

/** A puppeteer page behind the part of playwright's Page API the tests use. */
class Page {
  constructor(page) {
    this.page = page;
    this.keyboard = new Keyboard(page);
    this.mouse = page.mouse;
  }

  goto(url) { return this.page.goto(url, { waitUntil: 'load', timeout: DEFAULT_TIMEOUT }); }
  url() { return this.page.url(); }
  async evaluate(fn, arg) { return unpack(JSON.parse(await this.page.evaluate(evaluateExpression(fn, arg)))); }
  title() { return this.page.title(); }
  inputValue(selector) { return this.locator(selector).inputValue(); }
  // The engine's Worker and the threads it starts, as puppeteer's BiDi workers: url() answers;
  // firefox-esr refuses evaluate() in a worker (script.callFunction: no such frame).
  workers() { return this.page.workers(); }
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
  check(selector) { return this.locator(selector).check(); }
  uncheck(selector) { return this.locator(selector).uncheck(); }
  close() { return this.page.close(); }
  // firefox-esr's BiDi has no per-page media emulation: launch with { colorScheme } instead.
  emulateMedia() { throw new Error('firefox driver: page.emulateMedia is not supported; launch the browser with { colorScheme }'); }
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
  // puppeteer has no download events: the page's next click() on a download link (an <a download>
  // with a blob: or data: URL, as the lab's Save makes) is caught in the page, which reads the
  // link's bytes instead of downloading them and hands them over as playwright's Download.
  async waitForEvent(event, { timeout = DEFAULT_TIMEOUT } = {}) {
    if (event !== 'download') throw new Error(`firefox driver: page.waitForEvent('${event}') is not supported (download)`);
    const caught = this.evaluate(() => new Promise((resolve, reject) => {
      const click = HTMLAnchorElement.prototype.click;
      HTMLAnchorElement.prototype.click = function () {
        if (!this.hasAttribute('download')) return click.call(this);
        HTMLAnchorElement.prototype.click = click;
        const name = this.download;
        fetch(this.href).then((r) => r.arrayBuffer()).then((buf) => {
          const u = new Uint8Array(buf);
          let bin = '';
          for (let i = 0; i < u.length; i += 0x8000) bin += String.fromCharCode(...u.subarray(i, i + 0x8000));
          resolve({ name, base64: btoa(bin) });
        }, reject);
      };
    }));
    caught.catch(() => {}); // a page that closes first rejects it; the race below reports the wait
    let timer;
    const late = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`firefox driver: no download within ${timeout} ms`)), timeout); });
    try {
      const { name, base64 } = await Promise.race([caught, late]);
      return new Download(name, Buffer.from(base64, 'base64'));
    } finally {
      clearTimeout(timer);
    }
  }
}

// Most of a new profile's first start is Firefox building its startup cache (startupCache/) and
// databases; a profile that has started once starts in about half the CPU time. So each launch
// starts from a copy of one such profile: made on first use by starting the browser on
// about:blank and closing it, so it holds no site data, no session to restore and no lock, and
// kept in the system's temp folder under the browser's build id (a new firefox-esr makes a new
// one). Test files run in parallel processes: each builds in a folder of its own and renames it
// into place, and the first rename wins.
const FIREFOX_BUILD_ID = /^BuildID=(\d+)$/m.exec(readFileSync('/usr/lib/firefox-esr/application.ini', 'utf8'))?.[1] ?? 'unknown';
const TEMPLATE_PROFILE = join(tmpdir(), `attnlab-firefox-profile-${FIREFOX_BUILD_ID}`);
const NOT_COPIED = new Set(['lock', '.parentlock', 'sessionstore.jsonlz4', 'sessionCheckpoints.json', 'sessionstore-backups', 'cache2', 'crashes', 'minidumps']);

async function seedProfile(profile) {
  if (!existsSync(TEMPLATE_PROFILE)) {
    const building = mkdtempSync(`${TEMPLATE_PROFILE}-building-`);
    const browser = await puppeteer.launch({ browser: 'firefox', protocol: 'webDriverBiDi', executablePath: FIREFOX_PATH, headless: true, userDataDir: building });
    await browser.close();
    try {
      renameSync(building, TEMPLATE_PROFILE);
    } catch (e) {
      if (!existsSync(TEMPLATE_PROFILE)) throw e;
      rmSync(building, { recursive: true, force: true });
    }
  }
  cpSync(TEMPLATE_PROFILE, profile, { recursive: true, filter: (src) => !NOT_COPIED.has(src.slice(TEMPLATE_PROFILE.length + 1).split('/')[0]) });
}

/**
 * Starts headless firefox-esr in the profile folder `profile` (seeded as above; `locale`: the reader's language;
 * `colorScheme`: 'dark' or 'light') and returns a playwright-like persistent context:
 * { pages(), newPage(), close() }.
 */
export async function launchFirefox(profile, { viewport, locale = 'en-US', colorScheme = null }) {
  await seedProfile(profile);
  const browser = await puppeteer.launch({
    browser: 'firefox',
    protocol: 'webDriverBiDi',
    executablePath: FIREFOX_PATH,
    headless: true,
    userDataDir: profile,
    defaultViewport: viewport,
    // navigator.languages, as playwright's `locale` sets it in Chromium.
    // prefers-color-scheme for every page, as playwright's `colorScheme` (0 dark, 1 light).
    extraPrefsFirefox: {
      'intl.accept_languages': locale,
      ...(colorScheme ? { 'layout.css.prefers-color-scheme.content-override': colorScheme === 'dark' ? 0 : 1 } : {}),
    },
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
    close: async () => {
      await browser.close();
      for (const d of tempDirs.splice(0)) rmSync(d, { recursive: true, force: true });
    },
  };
}
