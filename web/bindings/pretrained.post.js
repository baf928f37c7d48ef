// lab.loadPretrained (appended to the module by --post-js; the engine half is pretrained.cpp).
//
//   const model = await lab.loadPretrained({
//     weights: file,                        // model.safetensors: a File / Blob, Uint8Array or ArrayBuffer
//     config: configFile,                   // config.json: File / Blob, bytes, text or a parsed object (optional)
//     tokenizer: { 'vocab.json': f1, 'merges.txt': f2 },   // or a lab.Tokenizer (optional)
//     onProgress: (loaded, total) => {},    // bytes of the weights read so far (optional)
//   });
//   model.encode('Hello world');            // a lab.Model: logits, trace, generate, attentionMaps, ...
//   model.notes;                            // what was inferred (n_head = n_embd / 64, ...)
//
// A File or Blob is read one tensor at a time (Blob.slice), each slice copied into the module and
// dropped before the next: the file is never whole in JavaScript. Every refusal (a bad file, a
// bad config, a model too large for the module's memory) rejects with an Error naming it.
Module['loadPretrained'] = async function loadPretrained(options) {
  const where = 'loadPretrained';
  if (options === null || typeof options !== 'object') {
    throw new Error(where + ': options must be an object { weights, config, tokenizer }');
  }
  const isBlob = function (v) {
    return v !== null && typeof v === 'object' && typeof v.slice === 'function' && typeof v.size === 'number' &&
      !(v instanceof Uint8Array) && !(v instanceof ArrayBuffer);
  };
  const asBytes = async function (v, what) {
    if (v instanceof Uint8Array) return v;
    if (v instanceof ArrayBuffer) return new Uint8Array(v);
    if (isBlob(v)) return new Uint8Array(await v.arrayBuffer());
    throw new Error(where + ': ' + what + ' must be a File, Blob, Uint8Array or ArrayBuffer');
  };
  const weights = options.weights;
  let size;
  let slice;
  if (isBlob(weights)) {
    size = weights.size;
    slice = async function (begin, end) { return new Uint8Array(await weights.slice(begin, end).arrayBuffer()); };
  } else if (weights instanceof Uint8Array || weights instanceof ArrayBuffer) {
    const bytes = weights instanceof Uint8Array ? weights : new Uint8Array(weights);
    size = bytes.length;
    slice = async function (begin, end) { return bytes.subarray(begin, end); };
  } else {
    throw new Error(where + ': weights (model.safetensors) must be a File, Blob, Uint8Array or ArrayBuffer');
  }

  let config = null;
  if (typeof options.config === 'string') {
    config = options.config;
  } else if (options.config !== undefined && options.config !== null) {
    const c = options.config;
    config = c instanceof Uint8Array || c instanceof ArrayBuffer || isBlob(c)
      ? new TextDecoder().decode(await asBytes(c, 'config (config.json)'))
      : JSON.stringify(c);
  }

  // The model shares the tokenizer (setTokenizer); a handle made here is deleted afterwards, the
  // caller's own lab.Tokenizer stays the caller's.
  let tokenizer = null;
  let ownTokenizer = false;
  const t = options.tokenizer;
  if (t !== undefined && t !== null) {
    if (t instanceof Module['Tokenizer']) {
      tokenizer = t;
    } else if (typeof t === 'object') {
      const files = {};
      for (const name of Object.keys(t)) {
        files[name] = typeof t[name] === 'string' ? t[name] : await asBytes(t[name], 'tokenizer file ' + name);
      }
      tokenizer = Module['Tokenizer'].fromFiles(files);
      ownTokenizer = true;
    } else {
      throw new Error(where + ': tokenizer must be a lab.Tokenizer or an object of its files by name');
    }
  }

  const progress = typeof options.onProgress === 'function' ? options.onProgress : function () {};
  let loader = null;
  let model = null;
  try {
    const first = await slice(0, Math.min(8, size));
    const headerSize = Module['Gpt2Loader'].headerBytes(first);
    const header = await slice(0, Math.min(headerSize, size));
    loader = new Module['Gpt2Loader'](header, size, config);
    const reads = loader.reads();
    const total = reads.reduce(function (sum, r) { return sum + (r.end - r.begin); }, 0);
    let loaded = 0;
    progress(0, total);
    for (let i = 0; i < reads.length; ++i) {
      const bytes = await slice(reads[i].begin, reads[i].end);
      loader.feed(i, bytes);
      loaded += reads[i].end - reads[i].begin;
      progress(loaded, total);
    }
    const notes = loader.notes();
    model = loader.finish();
    if (tokenizer) model.setTokenizer(tokenizer);
    model.notes = notes;
    const done = model;
    model = null;
    return done;
  } finally {
    if (loader) loader.delete();
    if (model) model.delete();
    if (ownTokenizer) tokenizer.delete();
  }
};
