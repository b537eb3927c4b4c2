// The README's React example, taken from the installed package's README (its first `tsx` block)
// into readme-react.tsx, so the checks bundle, run and type-check the example users read.
import { readFileSync, writeFileSync } from 'node:fs';

export function writeReadmeExample() {
  const readme = readFileSync('node_modules/portal-wasm/README.md', 'utf8');
  const block = readme.match(/```tsx\n([\s\S]*?)```/);
  if (!block) throw new Error('the README has no tsx example');
  writeFileSync('readme-react.tsx', `// Written by readme.mjs from the package's README.\n${block[1]}`);
}
