// The TypeScript of the engine's tables (web/generated/, written by scripts/gen_types.mjs) is
// what the built module's tables say, in both flavours: a choice, a ModelConfig field or an
// AttentionOptions field changed in C++ without rebuilding fails here, naming the file. And the
// page writes no choice's names by hand: a union of choice names, or a list of all of a choice's
// names, in web/src fails here, naming the file and the line (the page imports the generated
// types and web/generated/choices.mjs instead).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import { ROOT, FLAVOURS, loadLab } from './harness.mjs';
import { generate, OUT_DIR } from '../../scripts/gen_types.mjs';

for (const flavour of FLAVOURS) {
  test(`${flavour}: web/generated/ is the module's tables`, async () => {
    const lab = await loadLab(flavour);
    for (const [name, text] of Object.entries(generate(lab))) {
      const file = path.join(OUT_DIR, name);
      assert.ok(fs.existsSync(file), `web/generated/${name} is missing: run node scripts/gen_types.mjs (scripts/build_wasm.sh does)`);
      assert.equal(fs.readFileSync(file, 'utf8'), text,
        `web/generated/${name} differs from the ${flavour} module's tables: run node scripts/gen_types.mjs`);
    }
  });

  test(`${flavour}: every choice a field holds is declared, with every value and a doc`, async () => {
    const lab = await loadLab(flavour);
    const choices = lab.choices();
    const types = new Set(choices.map((c) => c.type));
    assert.ok(types.has('Normalizer') && types.has('Architecture') && types.has('SoftmaxPrecision'));
    for (const c of choices) {
      assert.match(c.type, /^[A-Z][A-Za-z]+$/);
      assert.ok(c.doc.length > 0 && c.what.length > 0, `${c.type} has no doc`);
      assert.ok(c.values.length >= 2, `${c.type} has fewer than two values`);
      for (const v of c.values) assert.ok(/^[a-z0-9_]+$/.test(v.name) && v.help.length > 0, `${c.type}.${v.name}`);
    }
    for (const f of [...lab.modelConfigFields(), ...lab.attentionOptionFields()]) {
      assert.ok(types.has(f.type) || /^(number|boolean|number \| null|number\[\]|boolean \| number|Mask \| null)$/.test(f.type),
        `${f.name}: type ${f.type}`);
      if (types.has(f.type)) assert.ok(choices.find((c) => c.type === f.type).values.some((v) => v.name === f.default) || f.default === null);
    }
  });

  test(`${flavour}: an option of the field table is accepted by forward, an unknown one named`, async () => {
    const lab = await loadLab(flavour);
    const mha = new lab.MultiHeadAttention({ dModel: 4, numHeads: 2, seed: 1 });
    const x = { shape: [3, 4], data: new Float32Array(12).map((_, i) => Math.sin(i)) };
    const options = {};
    for (const f of lab.attentionOptionFields()) {
      if (f.default !== null && !(f.name.startsWith('block_sparse.'))) options[f.js] = f.default;
    }
    const withDefaults = mha.forward(x, options);
    assert.deepEqual(withDefaults, mha.forward(x));
    assert.throws(() => mha.forward(x, { normaliser: 'softmax' }), /unknown option 'normaliser' \(valid: causal, keyPaddingMask, /);
    mha.delete();
  });
}

// ---- no choice names by hand in web/src ----------------------------------------------------

function sourceFiles(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sourceFiles(p) : /\.(ts|mts)$/.test(e.name) ? [p] : [];
  });
}

test('web/src writes no union of a choice\'s names and no list of all of them by hand', async () => {
  const { CHOICES } = await import(path.join(OUT_DIR, 'choices.mjs'));
  const names = Object.entries(CHOICES);
  // The choice whose names include every word, if one does.
  const choiceOf = (words) => names.find(([, values]) => words.every((w) => values.includes(w)))?.[0];
  const found = [];
  for (const file of sourceFiles(path.join(ROOT, 'web', 'src'))) {
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    lines.forEach((line, i) => {
      const where = `${path.relative(ROOT, file)}:${i + 1}`;
      for (const m of line.matchAll(/'[a-z0-9_]+'(?:\s*\|\s*'[a-z0-9_]+')+/g)) {
        const words = [...m[0].matchAll(/'([a-z0-9_]+)'/g)].map((w) => w[1]);
        const choice = choiceOf(words);
        if (choice) found.push(`${where}: ${m[0]} (use the generated ${choice})`);
      }
      for (const m of line.matchAll(/\[\s*'[a-z0-9_]+'(?:\s*,\s*'[a-z0-9_]+')+\s*\]/g)) {
        const words = [...m[0].matchAll(/'([a-z0-9_]+)'/g)].map((w) => w[1]);
        const choice = choiceOf(words);
        if (choice && CHOICES[choice].every((v) => words.includes(v))) found.push(`${where}: ${m[0]} (use CHOICES.${choice})`);
      }
    });
  }
  assert.deepEqual(found, [], `choice names written by hand in web/src:\n${found.join('\n')}`);
});
