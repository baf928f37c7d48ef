// Experiments run in their own engine worker: a run is one long synchronous engine call, so the
// worker that draws the chapters' figures stays free, and Stop simply ends the worker (a busy
// worker reads no messages); the next run starts a new one.
import { EngineClient } from '../engine/client/client';
import type { ExperimentInfo, ExperimentOptions, ExperimentProgress, ExperimentResult } from '../engine/protocol/chapters';
import { RunStopped, type ExperimentRunner } from '../ui/experiment_panel';

export class ExperimentWorker implements ExperimentRunner {
  private client: EngineClient | null = null;
  private ready: Promise<unknown> | null = null;
  private listener: ((points: ExperimentProgress[]) => void) | null = null;
  /** Workers ended by stop(): what they still ran rejects with a RunStopped. */
  private readonly stopped = new WeakSet<EngineClient>();

  private engine(): { client: EngineClient; ready: Promise<unknown> } {
    if (!this.client) {
      const client = new EngineClient();
      client.onChapterEvent((e) => e.event === 'experiment.progress' && this.listener?.(e.points));
      this.client = client;
      this.ready = client.init();
    }
    return { client: this.client, ready: this.ready! };
  }

  async list(): Promise<ExperimentInfo[]> {
    const { client, ready } = this.engine();
    await ready;
    return (await client.call('experiments', { kind: 'experiments.list' })).list;
  }

  async run(name: string, options: ExperimentOptions, onProgress: (points: ExperimentProgress[]) => void): Promise<ExperimentResult> {
    const { client, ready } = this.engine();
    try {
      await ready;
      this.listener = onProgress;
      return (await client.call('experiment', { kind: 'experiment.run', name, options, base: document.baseURI })).result;
    } catch (e) {
      if (this.stopped.has(client)) throw new RunStopped(e instanceof Error ? e.message : String(e));
      throw e;
    } finally {
      this.listener = null;
    }
  }

  stop() {
    if (this.client) this.stopped.add(this.client);
    this.client?.dispose('stopped by the reader');
    this.client = null;
    this.ready = null;
  }
}
