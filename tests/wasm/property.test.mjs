// A seeded property test of the whole JS API (MultiHeadAttention, Trace, Model, Task, Trainer):
// thousands of random calls mixing valid arguments with wrong types, NaN/Infinity data, huge
// sizes, odd shapes and objects used after delete(). Every call must either return a result or
// throw an `Error` with a non-empty message; a result computed from finite inputs must hold only
// finite numbers; the module must keep working (a known-good call after each failure). A second
// pass of the same calls, each object deleted at its end, leaves the heap in use, the stack, the
// emval handle count and the WASM memory size where the first pass left them.
//
//   node --test tests/wasm/property.test.mjs                        the default seeds
//   ATTNLAB_PROPERTY_SEED=1234 node --test tests/wasm/property.test.mjs   one seed (printed on failure)
//   ATTNLAB_PROPERTY_CALLS=20000 ...                                 more calls per seed
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as tick } from 'node:timers/promises';

import { loadLab } from './harness.mjs';

const SEEDS = process.env.ATTNLAB_PROPERTY_SEED ? [Number(process.env.ATTNLAB_PROPERTY_SEED)] : [1, 2];
const CALLS = Number(process.env.ATTNLAB_PROPERTY_CALLS ?? 1500);
const HEAP_SLACK = 4096;  // bytes: allocator bookkeeping may move by a few KB

// mulberry32: a small seeded generator, so a seed replays the same calls.
function generator(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
  const int = (lo, hi) => lo + Math.floor(next() * (hi - lo + 1));
  const pick = (xs) => xs[Math.floor(next() * xs.length)];
  const chance = (p) => next() < p;
  return { next, int, pick, chance };
}

// Values of every JS type that options and arguments may wrongly receive.
const ODD_VALUES = [undefined, null, true, false, 0, -1, 1.5, NaN, Infinity, -Infinity, 2 ** 31, 2 ** 53, 1e300,
  -1e300, '', 'x', '4', [], [1, 2], {}, { shape: [2] }, () => 1, new Float32Array(3), new Int32Array(2), 7n];

// The calls of one seed. `r` is the generator; `lab` the module; each maker returns a value
// that is usually valid and sometimes not.
function makeWorld(lab, r) {
  const live = { mha: [], model: [], task: [], trainer: [], trace: [] };
  const dead = [];
  const size = () => (r.chance(0.9) ? r.int(1, 6) : r.pick([0, -1, 1.5, NaN, Infinity, 2 ** 31, 2 ** 40, '3', null]));
  const odd = () => r.pick(ODD_VALUES);
  const maybe = (valid) => (r.chance(0.85) ? valid : odd());
  const floatData = (n) => {
    const data = new Float32Array(n);
    for (let i = 0; i < n; i++) data[i] = r.next() * 2 - 1;
    if (r.chance(0.1)) data[r.int(0, Math.max(0, n - 1))] = r.pick([NaN, Infinity, -Infinity]);
    return data;
  };
  const tensor = (shape) => {
    if (r.chance(0.1)) return odd();
    const n = shape.reduce((a, b) => a * (Number.isInteger(b) && b >= 0 && b < 64 ? b : 1), 1);
    const data = r.chance(0.9) ? floatData(n) : r.pick([floatData(n + 1), new Int32Array(n), [1, 2, 3], null]);
    return { shape: r.chance(0.9) ? shape : r.pick([[], [n], [1, 2, 3, 4, 5], [-1, n], ['a']]), data };
  };
  const tokens = (T, V) => {
    const ids = Int32Array.from({ length: T }, () => (r.chance(0.97) ? r.int(0, Math.max(0, V - 1)) : r.pick([-1, V, 2 ** 31 - 1])));
    return r.chance(0.8) ? ids : r.pick([{ shape: [1, T], data: ids }, Array.from(ids), odd()]);
  };
  const any = (kind) => (live[kind].length && r.chance(0.95) ? r.pick(live[kind]) : null);
  const hasNonFinite = (x) => {
    if (typeof x === 'number') return !Number.isFinite(x);
    if (ArrayBuffer.isView(x)) return Array.prototype.some.call(x, (v) => typeof v === 'number' && !Number.isFinite(v));
    if (x && typeof x === 'object') return Object.values(x).some(hasNonFinite);
    return false;
  };

  const kill = (kind, which) => {
    if (!live[kind].length) return;
    const i = which ? live[kind].indexOf(which) : r.int(0, live[kind].length - 1);
    const [obj] = live[kind].splice(i, 1);
    obj.delete();
    dead.push(obj);
  };

  const mhaOptions = () => ({
    dModel: maybe(r.pick([4, 8, 12])), numHeads: maybe(r.pick([1, 2, 4])), numKvHeads: maybe(r.pick([0, 1, 2])),
    bias: maybe(r.chance(0.5)), seed: maybe(r.int(0, 9)), ...(r.chance(0.1) ? { kvDim: maybe(r.pick([0, 4, 6])) } : {}),
    ...(r.chance(0.05) ? { [r.pick(['dmodel', 'heads', 'extra'])]: odd() } : {}),
  });
  const forwardOptions = (T) => {
    const o = {};
    if (r.chance(0.5)) o.causal = maybe(r.chance(0.5));
    if (r.chance(0.3)) o.positional = maybe(r.pick(['none', 'rope', 'sinusoidal', 'learned', 'ROPE']));
    if (r.chance(0.2)) o.window = maybe(r.int(0, T + 1));
    if (r.chance(0.1)) o.globalTokens = maybe(r.int(0, 2));
    if (r.chance(0.2)) o.scale = r.pick([true, false, 0.5, NaN, 'x', null]);
    if (r.chance(0.1)) o.ropeBase = r.pick([10000, 0, -1, NaN, 1e300]);
    if (r.chance(0.1)) o.positionOffset = r.pick([0, 3, -1, 2 ** 40]);
    if (r.chance(0.1)) o.checkFinite = maybe(true);
    if (r.chance(0.1)) o.keyPaddingMask = r.pick([{ shape: [T], data: new Uint8Array(T) }, { shape: [1, T + 1], data: new Uint8Array(T + 1) }, odd()]);
    if (r.chance(0.1)) o.attnMask = r.pick([{ shape: [T, T], data: new Uint8Array(T * T) }, { shape: [T, 1], data: new Uint8Array(T) }, odd()]);
    if (r.chance(0.05)) o.stages = r.pick([['weights'], ['scores', 'output'], ['nope'], 'weights', [1]]);
    if (r.chance(0.05)) o[r.pick(['Causal', 'mask', 'bogus'])] = odd();
    return r.chance(0.95) ? o : odd();
  };
  const rarely = (valid) => (r.chance(0.97) ? valid : odd());
  const modelOptions = () => {
    // Half of the models fit a live task, so that trainers can be built on them.
    const task = live.task.length && r.chance(0.5) ? r.pick(live.task) : null;
    const kind = task ? (task.kind() === 'classification' ? 'encoder' : 'decoder') : r.pick(['decoder', 'encoder']);
    const o = {
      kind: rarely(kind), vocabSize: rarely(task ? task.vocabSize() : r.int(2, 12)),
      maxLen: rarely(task ? task.seqLen() + 1 : r.int(4, 12)), dModel: rarely(r.pick([4, 8])),
      numHeads: rarely(r.pick([1, 2])), numLayers: rarely(r.int(1, 2)), seed: rarely(r.int(0, 9)),
    };
    if (kind === 'encoder') o.numClasses = rarely(task ? task.numClasses() : r.int(2, 4));
    for (const [key, values] of [
      ['numKvHeads', [0, 1, 2]], ['ffDim', [0, 8, 16]], ['activation', ['gelu', 'relu', 'tanh']],
      ['positional', ['none', 'sinusoidal', 'learned', 'rope']], ['norm', ['pre', 'post', 'mid']],
      ['scale', [true, false]], ['attentionScale', [null, 0.5, 2]], ['dropout', [0, 0.1, 1.5]],
      ['tieWeights', [true, false]], ['pooling', ['mean', 'cls']], ['bias', [true, false]],
      ['gradientCheckpointing', [true, false]], ['attentionWindow', [0, 2]], ['globalTokens', [0, 1]],
    ]) {
      if (r.chance(0.3)) o[key] = rarely(r.pick(values));
    }
    if (r.chance(0.03)) Object.assign(o, r.pick([{ dModel: 2 ** 20 }, { vocabSize: 2 ** 30 }, { numLayers: 1e6 }, { maxLen: 2 ** 40 }]));
    return o;
  };
  const trainerOptions = () => {
    const o = {};
    for (const [key, valid, invalid] of [
      ['optimizer', ['adamw', 'sgd'], ['adam']], ['lr', [1e-3, 1e-2], [0, -1, NaN, 1e300]], ['minLr', [0, 1e-4], [-1]],
      ['weightDecay', [0, 0.01], [-1]], ['beta1', [0.9], [1, 2]], ['beta2', [0.999, 0.5], [1]],
      ['momentum', [0, 0.9], [-0.5]], ['batchSize', [1, 2, 4], [0, 2 ** 31]], ['warmupSteps', [0, 2], [-3]],
      ['totalSteps', [0, 5], [0.5]], ['clipNorm', [0, 1], [-1]], ['seed', [0, 1, 2], [-2]],
      ['trackAttention', [true, false], [1]],
    ]) {
      if (r.chance(0.3)) o[key] = r.chance(0.9) ? r.pick(valid) : r.chance(0.7) ? r.pick(invalid) : odd();
    }
    if (!('batchSize' in o)) o.batchSize = r.int(1, 4);
    return o;
  };

  // Each action: [name, function returning {result, finiteInputs}] or null when it has no target.
  const actions = [
    ['new MultiHeadAttention', () => {
      const o = r.chance(0.95) ? mhaOptions() : odd();
      const m = new lab.MultiHeadAttention(o);
      live.mha.push(m);
      return { result: m.config(), finite: true };
    }],
    ['mha.forward', () => {
      const m = any('mha'); if (!m) return null;
      const C = m.config().dModel, T = size();
      const x = tensor(r.chance(0.5) ? [T, C] : [size(), T, C + (r.chance(0.05) ? 1 : 0)]);
      const o = forwardOptions(T);
      return { result: r.chance(0.9) ? m.forward(x, o) : m.forward(x), finite: !hasNonFinite(x) && !hasNonFinite(o) };
    }],
    ['mha.trace', () => {
      const m = any('mha'); if (!m) return null;
      const C = m.config().dModel, T = size();
      const x = tensor([T, C]);
      const t = m.trace(x, forwardOptions(T));
      live.trace.push(t);
      return { result: t.stageNames(), finite: true };
    }],
    ['mha.setParameter', () => {
      const m = any('mha'); if (!m) return null;
      const names = m.parameterNames();
      const name = r.chance(0.9) ? r.pick(names) : odd();
      const shape = typeof name === 'string' ? m.getParameter(name).shape : [2, 2];
      const p = tensor(r.chance(0.9) ? shape : [shape[0] + 1, ...shape.slice(1)]);
      m.setParameter(name, p);
      const stored = m.getParameter(name);
      if (hasNonFinite(p)) kill('mha', m);  // its outputs may now be NaN
      return { result: stored, finite: !hasNonFinite(p) };
    }],
    ['trace.stage', () => {
      const t = any('trace'); if (!t) return null;
      const names = t.stageNames();
      const name = r.chance(0.8) ? r.pick([...names, 'nope']) : odd();
      const known = names.includes(name);
      const heads = known ? t.numHeads(name) : 1, batches = known ? t.numBatches(name) : 1;
      const args = [name, maybe(r.int(-1, heads)), maybe(r.int(0, batches))].slice(0, r.int(1, 3));
      // Recorded stages of a finite input may hold -inf (masked scores): not checked for finiteness.
      return { result: [t.stage(...args), heads, batches], finite: false };
    }],
    ['new Task', () => {
      const name = r.chance(0.9) ? r.pick([...lab.taskNames(), 'nope']) : odd();
      const o = {};
      for (const key of ['length', 'vocab', 'k', 'seed']) if (r.chance(0.3)) o[key] = r.chance(0.8) ? r.int(1, 8) : odd();
      if (r.chance(0.03)) o.length = r.pick([1e9, 2 ** 40]);
      const t = r.chance(0.8) ? new lab.Task(name, o) : new lab.Task(name);
      live.task.push(t);
      return { result: [t.name(), t.kind(), t.vocabSize(), t.seqLen(), t.numClasses()], finite: true };
    }],
    ['task.sample', () => {
      const t = any('task'); if (!t) return null;
      const b = r.chance(0.9) ? r.int(1, 4) : r.pick([0, -1, 1e9, NaN, 'x', 2 ** 31]);
      return { result: r.chance(0.5) ? t.sample(b) : t.sample(b, maybe(r.int(0, 5))), finite: true };
    }],
    ['task.decode/encode', () => {
      const t = any('task'); if (!t) return null;
      const ids = tokens(r.int(0, t.seqLen()), t.vocabSize());
      const text = t.decode(ids);
      const again = t.encode(r.chance(0.8) ? (Array.isArray(text) ? text[0] : text) : r.pick(['', '|||', '\u00e9', 'zz 99', odd()]));
      return { result: [text, again], finite: true };
    }],
    ['new Model', () => {
      const o = modelOptions();
      const m = new lab.Model(o);
      live.model.push(m);
      return { result: [m.config(), m.kind(), m.numParameters()], finite: true };
    }],
    ['model.forward-style', () => {
      const m = any('model'); if (!m) return null;
      const c = m.config();
      const T = r.chance(0.9) ? r.int(1, c.maxLen) : r.pick([0, c.maxLen + 1]);
      const ids = tokens(T, c.vocabSize);
      const method = r.pick(['logits', 'predict', 'attentionMaps', 'trace', 'generate']);
      if (method === 'trace') {
        const t = m.trace(ids, maybe({ layer: r.int(0, c.numLayers) }));
        live.trace.push(t);
        return { result: t.stageNames(), finite: true };
      }
      if (method === 'generate') {
        if (c.kind !== 'decoder' && r.chance(0.8)) return null;
        const n = r.chance(0.9) ? r.int(0, 4) : odd();
        return { result: m.generate(ids, n, maybe({ temperature: r.pick([0, 0.8, -1, NaN]), seed: r.int(0, 3) })), finite: true };
      }
      return { result: r.chance(0.7) ? m[method](ids) : m[method](ids, maybe({})), finite: true };
    }],
    ['model.save/load', () => {
      const m = any('model'); if (!m) return null;
      const bytes = m.save();
      const mutated = bytes.slice();
      if (r.chance(0.7)) for (let i = r.int(0, 4); i >= 0; i--) mutated[r.int(0, mutated.length - 1)] ^= 1 << r.int(0, 7);
      const input = r.chance(0.9) ? mutated.subarray(0, r.chance(0.8) ? mutated.length : r.int(0, mutated.length)) : odd();
      // Flipped bits in the data may load as NaN weights: such a model leaves the pool.
      const changed = input !== bytes && (!ArrayBuffer.isView(input) || input.some((b, i) => b !== bytes[i]));
      if (r.chance(0.5)) {
        const again = lab.Model.load(input);
        const config = again.config();
        if (changed) again.delete(); else live.model.push(again);
        return { result: config, finite: true };
      }
      m.loadParameters(input);
      if (changed) kill('model', m);
      return { result: null, finite: true };
    }],
    ['new Trainer', () => {
      const m = any('model'), t = any('task');
      if (!m || !t) return null;
      const tr = new lab.Trainer(m, t, r.chance(0.95) ? trainerOptions() : odd());
      live.trainer.push(tr);
      return { result: tr.options(), finite: true };
    }],
    ['trainer.step/evaluate', () => {
      const tr = any('trainer'); if (!tr) return null;
      const n = r.chance(0.9) ? r.int(1, 2) : r.pick([0, -1, NaN, 'x', 1e9]);
      const result = r.chance(0.7) ? tr.step(n) : tr.evaluate(n, maybe(r.int(0, 3)));
      return { result: [result, tr.stepsDone(), tr.lrAt(r.int(0, 10))], finite: false };
    }],
    ['delete', () => {
      const kind = r.pick(Object.keys(live));
      if (!live[kind].length) return null;
      kill(kind);
      return { result: null, finite: true };
    }],
    ['use a deleted object', () => {
      if (!dead.length) return null;
      const obj = r.pick(dead);
      const method = r.pick(['forward', 'config', 'stage', 'sample', 'step', 'save', 'delete', 'name']);
      if (typeof obj[method] !== 'function') return null;
      return { result: obj[method](odd()), finite: true };
    }],
  ];

  const deleteAll = () => {
    for (const kind of Object.keys(live)) while (live[kind].length) kill(kind);
  };
  return { actions, deleteAll, live };
}

// Throws unless every number reachable from x is finite.
function requireFinite(x, path = 'result') {
  if (typeof x === 'number') {
    if (!Number.isFinite(x)) throw new Error(`${path} is ${x}`);
  } else if (ArrayBuffer.isView(x)) {
    for (let i = 0; i < x.length; i++) {
      if (typeof x[i] === 'number' && !Number.isFinite(x[i])) throw new Error(`${path}[${i}] is ${x[i]}`);
    }
  } else if (x && typeof x === 'object') {
    for (const [k, v] of Object.entries(x)) requireFinite(v, `${path}.${k}`);
  }
}

async function snapshot(lab) {
  await tick();  // the stack repair after a JS throw runs as a microtask
  return { heap: lab.heapUsed(), memory: lab.HEAP8.length, stack: lab.stackUsed(), handles: lab.count_emval_handles() };
}

// A known-good call: the module still computes after whatever came before.
function sanity(lab) {
  const m = new lab.MultiHeadAttention({ dModel: 4, numHeads: 2, seed: 1 });
  try {
    const y = m.forward({ shape: [3, 4], data: new Float32Array(12).fill(0.5) }, { causal: true });
    assert.deepEqual(y.shape, [3, 4]);
    requireFinite(y.data, 'sanity forward');
  } finally {
    m.delete();
  }
}

function runSeed(lab, seed, calls) {
  const r = generator(seed);
  const world = makeWorld(lab, r);
  const counts = { returned: 0, threw: 0 };
  for (let i = 0; i < calls; i++) {
    const [name, act] = r.pick(world.actions);
    let outcome;
    try {
      outcome = act();
      if (outcome === null) continue;
      counts.returned++;
    } catch (e) {
      counts.threw++;
      if (!(e instanceof Error) || typeof e.message !== 'string' || e.message.length === 0) {
        throw new Error(`call ${i} (${name}) threw ${typeof e} ${String(e)}, not an Error with a message`);
      }
      try {
        sanity(lab);
      } catch (broken) {
        throw new Error(`call ${i} (${name}) threw '${e.message}' and left the module broken: ${broken.message}`);
      }
      continue;
    }
    if (outcome.finite) {
      try {
        requireFinite(outcome.result);
      } catch (e) {
        throw new Error(`call ${i} (${name}) with finite inputs returned a non-finite number: ${e.message}`);
      }
    }
  }
  world.deleteAll();
  return counts;
}

for (const flavour of ['single', 'threads']) {
  for (const seed of SEEDS) {
    test(`${flavour}: ${CALLS} random API calls (seed ${seed}) return results or throw Errors, and leak nothing`, async () => {
      const lab = await loadLab(flavour);
      try {
        sanity(lab);
        // The first pass reaches every one-time allocation (static tables, the corpus, the
        // thread pool, the kept error message) and the memory's high-water mark.
        const first = runSeed(lab, seed, CALLS);
        assert.ok(first.returned > CALLS / 10 && first.threw > CALLS / 20,
          `both outcomes exercised: ${first.returned} returned, ${first.threw} threw`);
        const before = await snapshot(lab);
        runSeed(lab, seed, CALLS);
        const after = await snapshot(lab);
        assert.ok(Math.abs(after.heap - before.heap) <= HEAP_SLACK, `heapUsed ${before.heap} -> ${after.heap}`);
        assert.equal(after.stack, before.stack, 'stackUsed');
        assert.equal(after.handles, before.handles, 'emval handles');
        assert.equal(after.memory, before.memory, 'HEAP8.length grew on a replay of the same calls');
        sanity(lab);
      } catch (e) {
        e.message = `[${flavour}, ATTNLAB_PROPERTY_SEED=${seed} ATTNLAB_PROPERTY_CALLS=${CALLS}] ${e.message}`;
        throw e;
      }
    });
  }
}
