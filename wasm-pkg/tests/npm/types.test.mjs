// tsc --noEmit --strict over a TypeScript example that uses every export of every entry (for
// bundlers and browsers), over a Node module (nodenext resolution, the "node" condition), and over
// the Vite + AI SDK app (vite-chat/).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import test from 'node:test';

import { writeReadmeExample } from './readme.mjs';

const tsc = join(dirname(createRequire(import.meta.url).resolve('typescript/package.json')), 'bin', 'tsc');

function typecheck(project) {
  const result = spawnSync(process.execPath, [tsc, '-p', project], { encoding: 'utf8' });
  assert.equal(result.status, 0, `tsc -p ${project}:\n${result.stdout}${result.stderr}`);
}

test('tsc --strict: every export, for bundlers and browsers', () => {
  writeReadmeExample();
  typecheck('tsconfig.json');
});

test('tsc --strict: the Node declarations (nodenext)', () => typecheck('tsconfig.node.json'));

// The AI SDK's declarations need Node's types, so the app is checked as Vite's templates check
// theirs, with skipLibCheck: the package's own declarations are checked strictly above.
test('tsc --strict: the Vite + AI SDK app', () => typecheck('vite-chat/tsconfig.json'));

test('the TypeScript example names every export of every entry', () => {
  const example = readFileSync('every-export.ts', 'utf8');
  const pkg = 'node_modules/portal-wasm';
  const { exports } = JSON.parse(readFileSync(`${pkg}/package.json`, 'utf8'));
  const declarations = new Set();
  for (const entry of Object.values(exports)) {
    if (typeof entry === 'string') continue;
    declarations.add(entry.types);
    if (entry.node) declarations.add(entry.node.types);
  }
  const missing = [];
  for (const file of declarations) {
    const text = readFileSync(`${pkg}/${file}`, 'utf8');
    for (const [, name] of text.matchAll(/^export (?:declare )?(?:class|function|interface|type|const|let|enum) (\w+)/gm)) {
      if (!new RegExp(`\\b${name}\\b`).test(example)) missing.push(`${name} (${file})`);
    }
  }
  assert.deepEqual(missing, [], 'exports every-export.ts does not use');
});
