// The native GoogleTest files of the kernels, of flash attention and of the layers (tests/nn),
// compiled to WebAssembly (threads flavour) and run under Node: the 128-bit micro-kernels, the
// packing and the tile shapes that exist only in the WASM build are checked against the same
// references and invariants as the native ones (matmul against the double-precision reference
// for every variant and ragged size, its epilogues bit for bit, flash attention against the
// materialised path for every mask, 1 vs 2 threads bit-identical, every layer's backward against
// finite differences). The target is built by scripts/test.sh (see web/CMakeLists.txt).
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { ROOT } from './harness.mjs';

const BINARY = path.join(ROOT, 'build-wasm-threads/web/attnlab_wasm_kernel_tests.js');

test('kernel, flash attention and layer GoogleTests pass under WebAssembly (threads flavour)', () => {
  assert.ok(
    fs.existsSync(BINARY),
    `${path.relative(ROOT, BINARY)} is missing: build it with ` +
      '`scripts/build_wasm.sh threads && cmake --build build-wasm-threads --target attnlab_wasm_kernel_tests`',
  );
  const run = spawnSync(process.execPath, [BINARY, '--gtest_brief=1'], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 300_000,
  });
  const output = `${run.stdout ?? ''}${run.stderr ?? ''}`;
  assert.equal(run.status, 0, `the WASM GoogleTest run failed (status ${run.status}, signal ${run.signal}):\n${output}`);
  const passed = output.match(/\[  PASSED  \] (\d+) tests?/);
  assert.ok(passed, `no GoogleTest summary in the output:\n${output}`);
  // The suite holds about 86 tests; a build that silently dropped files would run far fewer.
  assert.ok(Number(passed[1]) >= 80, `only ${passed[1]} tests ran:\n${output}`);
  assert.doesNotMatch(output, /\[  FAILED  \]/);
});
