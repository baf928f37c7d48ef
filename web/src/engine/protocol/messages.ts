// The typed messages between the page (engine/client/) and the engine worker (engine/worker/).
// Everything that crosses is plain data: tensors as { shape, data: Float32Array } with the
// Float32Arrays transferred, never views into WASM memory. Engine types come from the module's
// own declarations (web/attnlab.d.ts); the views' own message types live beside this file
// (walk.ts, lab.ts, chapters.ts, lens.ts).
import type { Flavour, Tensor } from '../../../attnlab';
import type { ChapterEvent, ChapterReply, ChapterRequest } from './chapters';
import type { AttentionMaps, LabEvent, LabSettings, RunInfo, TextSource, TryResult } from './lab';
import type { LensReply, LensRequest } from './lens';
import type { HeadsReply, HeadsRequest } from './heads';
import type { PretrainedEvent, PretrainedReply, PretrainedRequest } from './pretrained';
import type { TraceRequest, TraceResult } from './walk';

export type { Tensor };

export interface EngineInfo {
  flavour: Exclude<Flavour, 'scalar'>;
  threads: number;
  simd: boolean;
  version: string;
  /** Why this flavour: cross-origin isolation decides whether SharedArrayBuffer exists. */
  crossOriginIsolated: boolean;
  /** True when the build has the Model / Task / Trainer bindings. */
  training: boolean;
  /** What is missing when training is false (names of the absent bindings). */
  trainingMissing: string[];
}

export type Request =
  | { kind: 'init'; loaderUrl: string; lock: string }
  | { kind: 'trace'; request: TraceRequest }
  /** sample: the input whose attention maps are shown; empty = the task's own seeded example. */
  | { kind: 'lab.create'; settings: LabSettings; sample: number[]; text?: TextSource }
  /** Further training of the current model with new training settings (same model shape and task). */
  | { kind: 'lab.continue'; settings: LabSettings }
  | { kind: 'lab.run'; chunk: number; refreshEvery: number }
  | { kind: 'lab.pause' }
  | { kind: 'lab.evaluate'; batches: number }
  | { kind: 'lab.maps'; tokens: number[] }
  | { kind: 'lab.try'; text: string; maxNew: number }
  /** One layer of the lab's model on `text` (task syntax; empty = the lab's example input), for the walkthrough. */
  | { kind: 'lab.trace'; text: string; layer: number }
  | { kind: 'lab.save' }
  /** The parameter count of the model these settings describe (built by the engine, then deleted). */
  | { kind: 'lab.count'; settings: LabSettings }
  | { kind: 'lab.load'; bytes: Uint8Array; settings: LabSettings }
  | { kind: 'lab.dispose' }
  /**
   * For tests only (tests/browser/engine_recovery.test.mjs): the engine executes a real WebAssembly
   * trap (the module's test-only _trapForTests binding), so the page's handling of a trap can be
   * tested. The page never sends it.
   */
  | { kind: 'test.trap' }
  /** The chapters' figures and experiments (chapters.ts). */
  | ChapterRequest
  /** The walkthrough's pretrained model (pretrained.ts). */
  | PretrainedRequest
  /** The logit lens and patching of the walkthrough's decoder (lens.ts). */
  | LensRequest
  /** The Heads tab (heads.ts). */
  | HeadsRequest;

export type Reply =
  | { kind: 'init'; info: EngineInfo }
  | { kind: 'trace'; result: TraceResult }
  | { kind: 'ok' }
  | { kind: 'created'; info: RunInfo }
  | { kind: 'evaluate'; loss: number; accuracy: number }
  | { kind: 'maps'; maps: AttentionMaps }
  | { kind: 'try'; result: TryResult }
  /** A checkpoint was loaded; settings follow its architecture and the task it names. */
  | { kind: 'loaded'; info: RunInfo; settings: LabSettings; maps: AttentionMaps | null }
  | { kind: 'save'; bytes: Uint8Array }
  /** null: the settings' model has no size before its text is read (Train on text). */
  | { kind: 'count'; parameters: number | null }
  | ChapterReply
  | PretrainedReply
  | LensReply
  | HeadsReply;

/** How often a starting worker says it is still working (see 'engine.starting'). */
export const START_BEAT_MS = 500;

/** Unsolicited messages of the worker: training and figure events, and its own life. */
export type WorkerEvent =
  | LabEvent
  | ChapterEvent
  | PretrainedEvent
  /** The worker holds the Web Lock `lock` until it ends (the page learns of its end from it). */
  | { event: 'engine.alive'; lock: string }
  /** Sent every START_BEAT_MS while the worker loads the engine: the page restarts a worker that falls silent. */
  | { event: 'engine.starting' }
  /** The module trapped or ran out of memory: it cannot be used again, and the worker closes. */
  | { event: 'engine.fatal'; message: string };

export interface RequestEnvelope {
  id: number;
  body: Request;
}
export type ReplyEnvelope =
  | { id: number; ok: true; body: Reply }
  /** problem: the engine's name for why it refused a file (its Error's `problem`, e.g. 'truncated'), when it gave one. */
  | { id: number; ok: false; error: string; problem?: string };
