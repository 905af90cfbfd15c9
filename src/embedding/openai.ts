/**
 * An embedder for any OpenAI-compatible embeddings endpoint: `POST {baseUrl}/v1/embeddings`
 * with `{model, input: string[]}`, answered by `{data: [{embedding: number[], index}]}`
 * (OpenAI, Ollama, text-embeddings-inference, vLLM, LiteLLM, ...).
 *
 * Texts go out in batches of `batchSize`; a request that fails with 429, a 5xx status, a
 * timeout or a network error is retried with exponential backoff and jitter (honouring a
 * `Retry-After` header), up to `maxRetries` times. Rows are L2-normalised here whatever the
 * server returns. Uses Node's global fetch.
 */
import { EmbedderConfigError, EmbedderRequestError, type Embedder, type OpenAIEmbedderConfig } from './types.js';
import { openAiEndpoint } from '../platform/openaiEndpoint.js';
import { normalizeRows } from './vectors.js';

const DEFAULTS = { batchSize: 64, maxRetries: 5, initialBackoffMs: 500, maxBackoffMs: 10_000, timeoutMs: 60_000 };

/** `{baseUrl}/v1/embeddings`, accepting a base URL that already ends in `/v1`. */
export function embeddingsUrl(baseUrl: string): string {
  const endpoint = openAiEndpoint(baseUrl, 'embeddings');
  if ('problem' in endpoint) throw new EmbedderConfigError(`openai embedder: ${endpoint.problem}`);
  return endpoint.url;
}

interface EmbeddingsResponse {
  data?: { embedding?: unknown; index?: unknown }[];
}

/** Thrown inside one attempt; `retry` says whether another attempt may succeed. */
class AttemptError extends Error {
  constructor(
    message: string,
    readonly retry: boolean,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

function positiveInteger(name: string, value: number | undefined, fallback: number, min = 1): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min) throw new EmbedderConfigError(`openai embedder: ${name} must be an integer ≥ ${min}, got ${value}`);
  return value;
}

function retryAfter(header: string | null): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

function describeNetworkError(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message ?? String(error);
}

export class OpenAIEmbedder implements Embedder {
  readonly url: string;
  readonly model: string;
  readonly batchSize: number;
  private readonly maxRetries: number;
  private readonly initialBackoffMs: number;
  private readonly maxBackoffMs: number;
  private readonly timeoutMs: number;
  private readonly apiKey: string | undefined;
  private readonly idOverride: string | undefined;
  private knownDimension: number | undefined;
  /** Requests sent, retries included (for tests and metrics). */
  requests = 0;

  constructor(config: Omit<OpenAIEmbedderConfig, 'kind'>) {
    if (!config.model?.trim()) throw new EmbedderConfigError('openai embedder: model is required (CHRONOQL_OPENAI_MODEL)');
    this.url = embeddingsUrl(config.baseUrl);
    this.model = config.model.trim();
    this.apiKey = config.apiKey?.trim() || undefined;
    this.batchSize = positiveInteger('batchSize', config.batchSize, DEFAULTS.batchSize);
    this.maxRetries = positiveInteger('maxRetries', config.maxRetries, DEFAULTS.maxRetries, 0);
    this.initialBackoffMs = positiveInteger('initialBackoffMs', config.initialBackoffMs, DEFAULTS.initialBackoffMs, 0);
    this.maxBackoffMs = positiveInteger('maxBackoffMs', config.maxBackoffMs, DEFAULTS.maxBackoffMs, 0);
    this.timeoutMs = positiveInteger('timeoutMs', config.timeoutMs, DEFAULTS.timeoutMs);
    if (config.dimension !== undefined) positiveInteger('dimension', config.dimension, 0);
    this.knownDimension = config.dimension;
    this.idOverride = config.id?.trim() || undefined;
  }

  /** The vector length; known after `discoverDimension()` or from the configuration. */
  get dimension(): number {
    if (this.knownDimension === undefined) throw new EmbedderConfigError('openai embedder: dimension is not known yet (call discoverDimension first)');
    return this.knownDimension;
  }

  get id(): string {
    return this.idOverride ?? `openai:${this.model}@${this.dimension}d`;
  }

  /** Learns the dimension from one request when it was not configured. */
  async discoverDimension(): Promise<number> {
    if (this.knownDimension === undefined) await this.request(['dimension probe']);
    return this.dimension;
  }

  async embed(texts: readonly string[]): Promise<Float32Array> {
    texts.forEach((text, i) => {
      if (typeof text !== 'string') throw new TypeError(`embed: texts[${i}] is not a string`);
    });
    if (texts.length === 0) return new Float32Array(0);
    const parts: number[][][] = [];
    for (let start = 0; start < texts.length; start += this.batchSize) {
      // Some servers reject empty strings; an empty text embeds as a zero row instead.
      const batch = texts.slice(start, start + this.batchSize);
      const sent = batch.map((text, i) => ({ text, i })).filter(({ text }) => text.trim() !== '');
      const vectors = sent.length > 0 ? await this.request(sent.map(({ text }) => text)) : [];
      const rows: number[][] = batch.map(() => []);
      sent.forEach(({ i }, k) => (rows[i] = vectors[k]!));
      parts.push(rows);
    }
    const d = this.dimension;
    const out = new Float32Array(texts.length * d);
    let row = 0;
    for (const rows of parts) {
      for (const vector of rows) {
        if (vector.length > 0) out.set(vector, row * d);
        row++;
      }
    }
    return normalizeRows(out, d);
  }

  /** One batch, with retries; returns the vectors in input order. */
  private async request(input: string[]): Promise<number[][]> {
    let attempt = 0;
    for (;;) {
      try {
        return await this.attempt(input);
      } catch (error) {
        if (!(error instanceof AttemptError)) throw error;
        if (!error.retry || attempt >= this.maxRetries) {
          const tries = attempt + 1;
          throw new EmbedderRequestError(`${error.message}${error.retry ? ` (gave up after ${tries} attempt${tries === 1 ? '' : 's'})` : ''}`);
        }
        const backoff = Math.min(this.maxBackoffMs, this.initialBackoffMs * 2 ** attempt);
        const jittered = backoff / 2 + Math.random() * (backoff / 2);
        const delay = Math.min(this.maxBackoffMs, Math.max(jittered, error.retryAfterMs ?? 0));
        attempt++;
        await new Promise((done) => setTimeout(done, delay));
      }
    }
  }

  private async attempt(input: string[]): Promise<number[][]> {
    this.requests++;
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    if (this.apiKey) headers.authorization = `Bearer ${this.apiKey}`;
    let response: Response;
    try {
      response = await fetch(this.url, {
        method: 'POST',
        headers,
        body: JSON.stringify({ model: this.model, input }),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      const name = (error as Error).name;
      if (name === 'TimeoutError' || name === 'AbortError') {
        throw new AttemptError(`openai embedder: ${this.url} did not answer within ${this.timeoutMs} ms`, true);
      }
      throw new AttemptError(`openai embedder: cannot reach ${this.url} (${describeNetworkError(error)})`, true);
    }
    let text: string;
    try {
      text = await response.text();
    } catch (error) {
      throw new AttemptError(`openai embedder: the answer of ${this.url} broke off (${describeNetworkError(error)})`, true);
    }
    if (!response.ok) {
      const retry = response.status === 429 || response.status >= 500;
      const detail = text.replace(/\s+/g, ' ').trim().slice(0, 300);
      throw new AttemptError(
        `openai embedder: ${this.url} answered ${response.status} ${response.statusText}${detail ? `: ${detail}` : ''}`,
        retry,
        retryAfter(response.headers.get('retry-after')),
      );
    }
    let body: EmbeddingsResponse;
    try {
      body = JSON.parse(text) as EmbeddingsResponse;
    } catch {
      throw new AttemptError(`openai embedder: ${this.url} answered with something that is not JSON: ${text.slice(0, 120)}`, false);
    }
    return this.vectorsOf(body, input.length);
  }

  private vectorsOf(body: EmbeddingsResponse, expected: number): number[][] {
    const bad = (why: string): never => {
      throw new AttemptError(`openai embedder: unexpected answer from ${this.url}: ${why}`, false);
    };
    if (!Array.isArray(body?.data)) bad('no "data" array');
    if (body.data!.length !== expected) bad(`${body.data!.length} embeddings for ${expected} inputs`);
    const vectors: number[][] = new Array<number[]>(expected);
    body.data!.forEach((item, position) => {
      if (typeof item !== 'object' || item === null) bad(`data[${position}] is not an object`);
      const index = item.index ?? position;
      if (!Number.isInteger(index) || (index as number) < 0 || (index as number) >= expected || vectors[index as number])
        bad(`bad index ${String(item.index)}`);
      const embedding = item.embedding;
      if (!Array.isArray(embedding) || embedding.length === 0 || !embedding.every((x) => typeof x === 'number' && Number.isFinite(x))) {
        bad(`the embedding at index ${String(index)} is not a list of numbers${typeof embedding === 'string' ? ' (base64 encoding is not supported)' : ''}`);
      }
      vectors[index as number] = embedding as number[];
    });
    const first = vectors[0]!.length;
    if (this.knownDimension === undefined) this.knownDimension = first;
    for (const vector of vectors) {
      if (vector.length !== this.knownDimension) {
        throw new AttemptError(
          `openai embedder: ${this.url} (model ${this.model}) returned ${vector.length}-dimensional vectors, expected ${this.knownDimension}`,
          false,
        );
      }
    }
    return vectors;
  }
}

/** Creates the embedder; discovers the dimension with one request when it is not configured. */
export async function createOpenAIEmbedder(config: Omit<OpenAIEmbedderConfig, 'kind'>): Promise<OpenAIEmbedder> {
  const embedder = new OpenAIEmbedder(config);
  await embedder.discoverDimension();
  return embedder;
}
