// ModelConfig's field table (include/attnlab/model/config_fields.hpp) is the one list of its
// fields: the generated ModelConfig interface (web/generated/types.d.ts) names exactly the fields
// the table gives a JavaScript name, in the same order, and Model.config() returns exactly those
// keys.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import { ROOT, FLAVOURS, loadLab } from './harness.mjs';

// The member names of `export interface <name> { ... }` in a declaration file, in order.
function interfaceFields(source, name) {
  const start = source.indexOf(`export interface ${name} {`);
  assert.ok(start >= 0, `web/generated/types.d.ts declares no interface ${name}`);
  const body = source.slice(source.indexOf('{', start) + 1, source.indexOf('\n}', start));
  const withoutComments = body.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
  return [...withoutComments.matchAll(/^\s*([A-Za-z_$][\w$]*)\??\s*:/gm)].map((m) => m[1]);
}

const declarations = fs.readFileSync(path.join(ROOT, 'web/generated/types.d.ts'), 'utf8');

for (const flavour of FLAVOURS) {
  test(`${flavour}: the generated ModelConfig has the field table's JavaScript names`, async () => {
    const lab = await loadLab(flavour);
    const fields = lab.modelConfigFields();
    assert.ok(fields.length > 0);
    for (const f of fields) {
      assert.match(f.name, /^[a-z_]+$/);
      assert.ok(f.js === null || /^[a-z][A-Za-z]*$/.test(f.js), `${f.name}: js ${f.js}`);
      assert.ok(f.cli === null || /^[a-z-]+$/.test(f.cli), `${f.name}: cli ${f.cli}`);
      assert.ok(f.doc.length > 0, `${f.name} has no doc`);
    }
    const jsNames = fields.filter((f) => f.js !== null).map((f) => f.js);
    assert.deepEqual(interfaceFields(declarations, 'ModelConfig'), jsNames);

    const model = new lab.Model({ vocabSize: 5 });
    assert.deepEqual(Object.keys(model.config()), jsNames);
    model.delete();
  });

  test(`${flavour}: every JavaScript option of the table is accepted, an unknown one is named`, async () => {
    const lab = await loadLab(flavour);
    const model = new lab.Model({ vocabSize: 5 });
    const config = model.config();
    const again = new lab.Model({ ...config, seed: 0 });
    assert.deepEqual(again.config(), config);
    assert.throws(() => new lab.Model({ vocabSize: 5, nEmbd: 8 }), /unknown option 'nEmbd' \(valid: kind, vocabSize, .*, seed\)/);
    for (const m of [model, again]) m.delete();
  });
}
