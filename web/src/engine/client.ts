// The page side of the engine worker: promise-based requests plus a stream of training events.
import type { EngineInfo, Reply, ReplyEnvelope, Request, RequestEnvelope, TraceRequest, TraceResult, WorkerEvent } from './protocol';

type ReplyOf<K extends Reply['kind']> = Extract<Reply, { kind: K }>;

export class EngineClient {
  private readonly worker: Worker;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (r: Reply) => void; reject: (e: Error) => void }>();
  private readonly listeners = new Set<(e: WorkerEvent) => void>();

  constructor() {
    this.worker = new Worker(new URL('./worker.ts', import.meta.url), { type: 'module', name: 'attnlab-engine' });
    this.worker.onmessage = (ev: MessageEvent<ReplyEnvelope | WorkerEvent>) => {
      const msg = ev.data;
      if ('event' in msg) {
        for (const l of this.listeners) l(msg);
        return;
      }
      const p = this.pending.get(msg.id);
      if (!p) return;
      this.pending.delete(msg.id);
      if (msg.ok) p.resolve(msg.body);
      else p.reject(new Error(msg.error));
    };
    this.worker.onerror = (ev) => {
      const err = new Error(`engine worker failed: ${ev.message || 'could not start'}`);
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
    };
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

  async init(): Promise<EngineInfo> {
    const loaderUrl = new URL('engine/loader.mjs', document.baseURI).href;
    return (await this.expect('init', { kind: 'init', loaderUrl })).info;
  }

  async trace(request: TraceRequest): Promise<TraceResult> {
    return (await this.expect('trace', { kind: 'trace', request })).result;
  }

  call<K extends Reply['kind']>(kind: K, body: Request, transfer: Transferable[] = []) {
    return this.expect(kind, body, transfer);
  }

  onEvent(listener: (e: WorkerEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
