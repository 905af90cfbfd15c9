#!/usr/bin/env node
// The compiled CLI lives in dist/; `npm install` builds it (the "prepare" script). The product's
// commands come from dist/src/cli; the benchmark, evaluation and training commands from dist/eval.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const cli = new URL('../dist/src/cli/program.js', import.meta.url);
const evaluation = new URL('../dist/eval/commands/index.js', import.meta.url);
if (!existsSync(fileURLToPath(cli))) {
  process.stderr.write('chronoql: not built yet; run `npm install` (or `npm run build`) in the ChronoQL directory\n');
  process.exit(1);
}
const { createProgram, runProgram } = await import(cli.href);
const program = createProgram();
if (existsSync(fileURLToPath(evaluation))) (await import(evaluation.href)).addEvaluationSideCommands(program);
await runProgram(program, process.argv);
