// The lab's training loop, run in the engine worker: steps the session's trainer in small chunks,
// yielding to the worker's message queue between chunks (so Pause and Reset arrive mid-run), and
// posts metrics and attention maps to the page at a bounded rate.
import type { AttnLab } from '../../../attnlab';
import type { LabSettings, RunInfo } from '../protocol/lab';
import type { WorkerEvent } from '../protocol/messages';
import { TEXT } from '../protocol/limits';
import type { TrainingSession } from './training';

const yieldToEvents = () =>
  new Promise<void>((resolve) => {
    const ch = new MessageChannel();
    ch.port1.onmessage = () => resolve();
    ch.port2.postMessage(null);
  });

/**
 * Multiply-adds of one training step's projections and feed-forward, B * T * L * 12 * C^2 (the
 * attention scores add little at the lab's lengths), above which a second kernel thread pays.
 * CPU time per step of the threads build, 2 kernel threads against 1 (Node, the lab's default
 * task): 1.6x at d_model 32, 2 layers (9e6 per step), 1.3x at d_model 64, 2 layers (4e7), 1.2x at
 * d_model 128, 4 layers (3e8). So on two free cores a second thread gains at most 2 / 1.6 = 1.25x
 * on the default model, while its share of a core is gone from the page; from 4e7 on it gains
 * over 1.5x. (At 1 thread, the threads build costs the same CPU per step as the single build.)
 */
const TWO_THREAD_WORK = 2e7;

/**
 * Kernel threads for training: 1 for small models, where splitting tiny matrix products costs more
 * than it saves; 2 for larger ones, only where the machine has cores to spare (a pthread join
 * busy-waits, so two engine threads on a two-core laptop would starve the page's main thread).
 */
export function trainingThreads(poolSize: number, s: TrainingSession): number {
  const { batch, layers, dModel } = s.settings;
  const work = batch * s.task.seqLen() * layers * 12 * dModel * dModel;
  const cores = typeof navigator === 'object' ? navigator.hardwareConcurrency : 1;
  return work >= TWO_THREAD_WORK && cores >= 4 ? Math.min(2, poolSize) : 1;
}

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
    /** Called with an error the module cannot recover from (a trap): the worker then ends. */
    private readonly fatal: (e: unknown) => boolean,
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
    return { run: this.run, task: this.session.info(), steps: this.session.lastStep, parameters: this.session.model.numParameters(), picture: this.session.picture() };
  }

  pause() {
    this.running = false;
  }

  /** Starts the loop unless it runs already; it ends by posting 'lab.stopped'. */
  start(chunk: number, refreshEvery: number) {
    if (!this.session) throw new Error('no model: create one first');
    if (!this.running) void this.loop(this.session, chunk, refreshEvery);
  }

  /** A text model's sample of generated text at `step` (nothing for the other tasks). */
  private postSample(s: TrainingSession, run: number, step: number) {
    const sample = s.textSample();
    if (sample) this.post({ event: 'lab.sample', run, step, ...sample });
  }

  /** The attention maps (of `sample`, or of a forecaster's held-out window) and the series / shapes picture, of the model at `step`. */
  private postPicture(s: TrainingSession, run: number, sample: number[], step: number) {
    const maps = sample.length ? s.attentionMaps(sample) : s.seriesMaps();
    if (maps) this.post({ event: 'lab.maps', run, maps, step });
    const picture = s.picture();
    if (picture) this.post({ event: 'lab.picture', run, picture });
  }

  private async loop(s: TrainingSession, chunk: number, refreshEvery: number) {
    const run = this.run;
    const post = this.post;
    const sample = s.hasAttention ? this.sample : []; // an LSTM has no maps to post
    const pictured = s.settings.task === 'series' || s.settings.task === 'shapes'; // their forecast or images instead of token maps
    this.running = true;
    const fresh = (): WorkerEvent & { event: 'lab.metrics' } => ({ event: 'lab.metrics', run, metrics: [], stepsPerSecond: 0 });
    let pending = fresh();
    let lastPost = performance.now();
    let windowStart = performance.now();
    let windowSteps = 0;
    let step = s.lastStep;
    let lastMapsStep = -1;
    let lastMapsPost = -Infinity;
    let lastSampleStep = step;
    const threads = this.lab.buildInfo().threads;
    this.lab.setNumThreads(trainingThreads(this.lab.buildInfo().poolSize, s));
    let trapped = false;
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
        if ((sample.length || pictured) && Math.floor(step / refreshEvery) !== Math.floor(lastMapsStep / refreshEvery) && now - lastMapsPost > 750) {
          this.postPicture(s, run, sample, step);
          lastMapsStep = step;
          lastMapsPost = now;
        }
        // A text model writes a sample every TEXT.sampleEvery steps.
        if (Math.floor(step / TEXT.sampleEvery) !== Math.floor(lastSampleStep / TEXT.sampleEvery)) {
          this.postSample(s, run, step);
          lastSampleStep = step;
        }
        await yieldToEvents();
        if (this.run !== run) return; // reset or replaced while we yielded: this run's events are over
      }
      if (lastSampleStep !== step) this.postSample(s, run, step);
      if (pending.metrics.length) {
        const now = performance.now();
        pending.stepsPerSecond = (windowSteps * 1000) / Math.max(1, now - windowStart);
        post(pending);
      }
      if ((sample.length || pictured) && lastMapsStep !== step) this.postPicture(s, run, sample, step);
      post({ event: 'lab.stopped', run, reason: this.running ? 'done' : 'paused', step });
    } catch (e) {
      trapped = this.fatal(e);
      if (trapped) return;
      post({ event: 'lab.stopped', run, reason: 'error', message: e instanceof Error ? e.message : String(e), step });
    } finally {
      if (this.run === run) this.running = false;
      if (!trapped) this.lab.setNumThreads(threads); // a trapped module is not called again
    }
  }
}
