#!/usr/bin/env node
// The compiled CLI lives in dist/; `npm install` builds it (the "prepare" script).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const cli = new URL('../dist/src/cli.js', import.meta.url);
if (!existsSync(fileURLToPath(cli))) {
  process.stderr.write('chronoql: not built yet; run `npm install` (or `npm run build`) in the ChronoQL directory\n');
  process.exit(1);
}
await import(cli.href);
