// The README's examples, taken from the installed package's README into files the checks bundle,
// run and type-check: the React example (its first `tsx` block) into readme-react.tsx, and the
// first code block of its "In Vue" and "In Svelte" sections into readme-vue.js and
// readme-svelte.svelte.
import { readFileSync, writeFileSync } from 'node:fs';

const readme = () => readFileSync('node_modules/portal-wasm/README.md', 'utf8');

export function writeReadmeExample() {
  const block = readme().match(/```tsx\n([\s\S]*?)```/);
  if (!block) throw new Error('the README has no tsx example');
  writeFileSync('readme-react.tsx', `// Written by readme.mjs from the package's README.\n${block[1]}`);
}

/** The first code block after the README's `## heading`, written to `file`; returns its text. */
export function writeReadmeSection(heading, file) {
  const text = readme();
  const at = text.indexOf(`\n## ${heading}\n`);
  const block = at < 0 ? null : text.slice(at).match(/```\w*\n([\s\S]*?)```/);
  if (!block) throw new Error(`the README has no code block under "## ${heading}"`);
  writeFileSync(file, block[1]);
  return block[1];
}
