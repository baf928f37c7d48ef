// The page side of the engine worker: promise-based requests plus a stream of training events.
// The worker can end (a trap, running out of memory, the browser ending it): the client then rejects
// every request still waiting, tells its listeners why, and starts a new worker.
import type { ChapterEvent } from '../protocol/chapters';
import type { LabEvent } from '../protocol/lab';
import type { PretrainedEvent } from '../protocol/pretrained';
import type { EngineInfo, Reply, ReplyEnvelope, Request, RequestEnvelope, WorkerEvent } from '../protocol/messages';
import type { TraceRequest, TraceResult } from '../protocol/walk';

type ReplyOf<K extends Reply['kind']> = Extract<Reply, { kind: K }>;

/** What the page hears of the worker's life: it ended (and why), or a new one is ready. */
export type EngineLifeEvent = { kind: 'lost'; reason: string } | { kind: 'restarted'; info: EngineInfo } | { kind: 'failed'; reason: string };

/** Restarts allowed within RESTART_WINDOW_MS before the client gives up (a worker that dies on start). */
const MAX_RESTARTS = 3;
const RESTART_WINDOW_MS = 60_000;
/**
 * A starting worker says so every START_BEAT_MS (worker/worker.ts); one that sends nothing for
 * START_SILENCE_MS is blocked and is replaced, up to START_ATTEMPTS workers per init(). Nothing in
 * a healthy start holds the worker's event loop for long (compiling and instantiating the module
 * are asynchronous), so six missed beats mean a thread that will not come back. (firefox-esr under
 * WebDriver BiDi blocks the engine worker for good inside one of the `new Worker` calls with which
 * the threads flavour creates its pthread pool, in about one start of seven, independently from one
 * start to the next; the same page started without a WebDriver connection has not shown it. Six
 * attempts make a page that cannot start that way about one in a hundred thousand.)
 */
const START_SILENCE_MS = 3_000;
const START_ATTEMPTS = 6;

export class EngineClient {
  private worker!: Worker;
  /** Counts workers started; replies and deaths of an older worker are ignored. */
  private generation = 0;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (r: Reply) => void; reject: (e: Error) => void }>();
  private readonly listeners = new Set<(e: LabEvent) => void>();
  private readonly lifeListeners = new Set<(e: EngineLifeEvent) => void>();
  private readonly chapterListeners = new Set<(e: ChapterEvent) => void>();
  private readonly pretrainedListeners = new Set<(e: PretrainedEvent) => void>();
  private restarts: number[] = [];
  /** When the current worker was started or last sent anything (performance.now()). */
  private lastHeard = 0;

  constructor() {
    this.start();
  }

  private start() {
    const gen = ++this.generation;
    this.worker = new Worker(new URL('../worker/worker.ts', import.meta.url), { type: 'module', name: 'attnlab-engine' });
    this.lastHeard = performance.now();
    this.worker.onmessage = (ev: MessageEvent<ReplyEnvelope | WorkerEvent>) => {
      if (gen !== this.generation) return;
      this.lastHeard = performance.now();
      const msg = ev.data;
      if ('event' in msg) {
        if (msg.event === 'engine.starting') return;
        if (msg.event === 'engine.alive') this.watch(gen, msg.lock);
        else if (msg.event === 'engine.fatal') this.lost(gen, msg.message); // the worker closes itself
        else if (msg.event === 'experiment.progress' || msg.event === 'figure.progress' || msg.event === 'figure.load') for (const l of this.chapterListeners) l(msg);
        else if (msg.event === 'pretrained.progress') for (const l of this.pretrainedListeners) l(msg);
        else for (const l of this.listeners) l(msg);
        return;
      }
      const p = this.pending.get(msg.id);
      if (!p) return;
      this.pending.delete(msg.id);
      if (msg.ok) p.resolve(msg.body);
      else p.reject(Object.assign(new Error(msg.error), msg.problem ? { problem: msg.problem } : {}));
    };
    // An uncaught error in the worker, or a script that could not load: the worker is not trusted
    // further, so it ends and a new one starts.
    this.worker.onerror = (ev) => {
      ev.preventDefault();
      this.lost(gen, ev.message || 'the engine worker could not start');
    };
  }

  /** The worker holds the Web Lock `lock` while it lives: being granted it means the worker ended. */
  private watch(gen: number, lock: string) {
    if (!('locks' in navigator)) return;
    void navigator.locks.request(lock, () => this.lost(gen, 'the engine worker ended'));
  }

  private lost(gen: number, reason: string) {
    if (gen !== this.generation) return;
    this.worker.terminate();
    const err = new Error(`the engine stopped (${reason}); it is restarting`);
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
    for (const l of this.lifeListeners) l({ kind: 'lost', reason });
    const now = performance.now();
    this.restarts = this.restarts.filter((t) => now - t < RESTART_WINDOW_MS).concat(now);
    if (this.restarts.length > MAX_RESTARTS) {
      this.generation++; // nothing of the ended worker counts any more
      for (const l of this.lifeListeners) l({ kind: 'failed', reason: `it stopped ${this.restarts.length} times within a minute (last: ${reason})` });
      return;
    }
    this.start();
    this.init().then(
      (info) => {
        for (const l of this.lifeListeners) l({ kind: 'restarted', info });
      },
      (e: Error) => {
        if (gen + 1 === this.generation) for (const l of this.lifeListeners) l({ kind: 'failed', reason: e.message });
      },
    );
  }

  request(body: Request, transfer: Transferable[] = []): Promise<Reply> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      const env: RequestEnvelope = { id, body };
      this.worker.postMessage(env, transfer);
    });
  }

  private async expect<K extends Reply['kind']>(kind: K, body: Request, transfer: Transferable[] = []): Promise<ReplyOf<K>> {
    const r = await this.request(body, transfer);
    if (r.kind !== kind) throw new Error(`engine worker: expected a '${kind}' reply, got '${r.kind}'`);
    return r as ReplyOf<K>;
  }

  /** Loads the engine in the worker; a worker that falls silent while starting is replaced (START_SILENCE_MS). */
  async init(): Promise<EngineInfo> {
    const loaderUrl = new URL('engine/loader.mjs', document.baseURI).href;
    for (let attempt = 1; ; attempt++) {
      // Unique to this page and worker (crypto.randomUUID exists only in secure contexts).
      const lock = `attnlab-engine-${performance.timeOrigin}-${Math.random().toString(36).slice(2)}-${this.generation}`;
      const reply = this.expect('init', { kind: 'init', loaderUrl, lock });
      reply.catch(() => {}); // when the worker is replaced, this rejection has been dealt with below
      const silence = this.silence(this.generation);
      try {
        const r = await Promise.race([reply, silence.fell]);
        if (r !== 'silent') return r.info;
      } finally {
        silence.cancel();
      }
      if (attempt === START_ATTEMPTS) throw new Error(`the engine worker fell silent while starting, ${attempt} times in a row`);
      this.replaceSilent();
    }
  }

  /** `fell` resolves once the worker of generation `gen` has sent nothing for START_SILENCE_MS. */
  private silence(gen: number): { fell: Promise<'silent'>; cancel: () => void } {
    let timer = 0;
    const fell = new Promise<'silent'>((resolve) => {
      timer = window.setInterval(() => {
        if (gen === this.generation && performance.now() - this.lastHeard > START_SILENCE_MS) resolve('silent');
      }, 1000);
    });
    return { fell, cancel: () => clearInterval(timer) };
  }

  /** Ends a worker blocked while starting and starts another; what waited on it is rejected. */
  private replaceSilent() {
    this.worker.terminate();
    const err = new Error('the engine worker fell silent while starting; a new one is starting');
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
    this.start(); // a new generation: the ended worker's lock and messages no longer count
  }

  async trace(request: TraceRequest): Promise<TraceResult> {
    return (await this.expect('trace', { kind: 'trace', request })).result;
  }

  call<K extends Reply['kind']>(kind: K, body: Request, transfer: Transferable[] = []) {
    return this.expect(kind, body, transfer);
  }

  onEvent(listener: (e: LabEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Progress of the experiment this worker runs (protocol/chapters.ts). */
  onChapterEvent(listener: (e: ChapterEvent) => void): () => void {
    this.chapterListeners.add(listener);
    return () => this.chapterListeners.delete(listener);
  }

  /** Progress of the walkthrough's model while it opens (protocol/pretrained.ts). */
  onPretrainedEvent(listener: (e: PretrainedEvent) => void): () => void {
    this.pretrainedListeners.add(listener);
    return () => this.pretrainedListeners.delete(listener);
  }

  /**
   * Ends the worker for good: what waits on it is rejected, and nothing of it is heard again (no
   * restart). Stopping a running experiment does this, since a busy worker reads no messages.
   */
  dispose(reason = 'the engine worker was stopped') {
    this.generation++;
    this.worker.terminate();
    const err = new Error(reason);
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }

  /** Follows the worker's life: lost (pending requests were rejected), restarted, or failed for good. */
  onLife(listener: (e: EngineLifeEvent) => void): () => void {
    this.lifeListeners.add(listener);
    return () => this.lifeListeners.delete(listener);
  }
}
