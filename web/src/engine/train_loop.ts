// The lab's training loop, run in the engine worker: steps the session's trainer in small chunks,
// yielding to the worker's message queue between chunks (so Pause and Reset arrive mid-run), and
// posts metrics and attention maps to the page at a bounded rate.
import type { AttnLab } from '../../attnlab';
import type { LabSettings, RunInfo, WorkerEvent } from './protocol';
import type { TrainingSession } from './training_engine';

const yieldToEvents = () =>
  new Promise<void>((resolve) => {
    const ch = new MessageChannel();
    ch.port1.onmessage = () => resolve();
    ch.port2.postMessage(null);
  });

/** The worker's one training session and whether its loop runs. */
export class LabRunner {
  session: TrainingSession | null = null;
  /** The input whose attention maps the page shows (token ids). */
  sample: number[] = [];
  /** Tags the events of the current model's training; a new model or continuation takes the next. */
  private run = 0;
  private running = false;

  constructor(
    private readonly lab: AttnLab,
    private readonly post: (e: WorkerEvent) => void,
  ) {}

  /** Stops any run and replaces the session (null disposes it). */
  replace(session: TrainingSession | null) {
    this.running = false;
    this.run++;
    this.session?.dispose();
    this.session = session;
    this.sample = session ? session.sampleTokens() : [];
  }

  /** Trains the current model further with new training settings (the loop must be stopped). */
  continueWith(settings: LabSettings) {
    if (!this.session) throw new Error('no model: create one first');
    if (this.running) throw new Error('the model is training: pause it first');
    this.session.continueWith(settings);
    this.run++;
  }

  /** The current model as the page knows it. */
  info(): RunInfo {
    if (!this.session) throw new Error('no model: create one first');
    return { run: this.run, task: this.session.info(), steps: this.session.lastStep };
  }

  pause() {
    this.running = false;
  }

  /** Starts the loop unless it runs already; it ends by posting 'lab.stopped'. */
  start(chunk: number, refreshEvery: number) {
    if (!this.session) throw new Error('no model: create one first');
    if (!this.running) void this.loop(this.session, chunk, refreshEvery);
  }

  private async loop(s: TrainingSession, chunk: number, refreshEvery: number) {
    const run = this.run;
    const post = this.post;
    const sample = this.sample;
    this.running = true;
    const fresh = (): WorkerEvent & { event: 'lab.metrics' } => ({ event: 'lab.metrics', run, metrics: [], stepsPerSecond: 0 });
    let pending = fresh();
    let lastPost = performance.now();
    let windowStart = performance.now();
    let windowSteps = 0;
    let step = s.lastStep;
    let lastMapsStep = -1;
    let lastMapsPost = -Infinity;
    // One kernel thread while training: the lab's models are tiny (a second thread gains little), and
    // a pthread join busy-waits, so two engine threads would take both cores of a two-core laptop
    // and starve the page's main thread. The walkthrough keeps all threads.
    const threads = this.lab.buildInfo().threads;
    this.lab.setNumThreads(1);
    try {
      while (this.running) {
        const remaining = s.target - step;
        if (remaining <= 0) break;
        const m = s.step(Math.min(chunk, remaining));
        step = m.step;
        windowSteps += Math.min(chunk, remaining);
        pending.metrics.push(m);
        const now = performance.now();
        if (now - lastPost > 250) {
          pending.stepsPerSecond = (windowSteps * 1000) / (now - windowStart);
          post(pending);
          pending = fresh();
          lastPost = now;
          if (now - windowStart > 2000) {
            windowStart = now;
            windowSteps = 0;
          }
        }
        // Maps every refreshEvery steps, but at most every 0.75 s: each refresh repaints them all.
        if (sample.length && Math.floor(step / refreshEvery) !== Math.floor(lastMapsStep / refreshEvery) && now - lastMapsPost > 750) {
          post({ event: 'lab.maps', run, maps: s.attentionMaps(sample), step });
          lastMapsStep = step;
          lastMapsPost = now;
        }
        await yieldToEvents();
        if (this.run !== run) return; // reset or replaced while we yielded: this run's events are over
      }
      if (pending.metrics.length) {
        const now = performance.now();
        pending.stepsPerSecond = (windowSteps * 1000) / Math.max(1, now - windowStart);
        post(pending);
      }
      if (sample.length && lastMapsStep !== step) post({ event: 'lab.maps', run, maps: s.attentionMaps(sample), step });
      post({ event: 'lab.stopped', run, reason: this.running ? 'done' : 'paused', step });
    } catch (e) {
      post({ event: 'lab.stopped', run, reason: 'error', message: e instanceof Error ? e.message : String(e), step });
    } finally {
      if (this.run === run) this.running = false;
      this.lab.setNumThreads(threads);
    }
  }
}
