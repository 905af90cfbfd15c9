/**
 * The one place ChronoQL reads its environment: every setting, parsed and checked once into a
 * typed `Config`. Every other module receives its settings as arguments. The variables are listed
 * in README.md, "Configuration"; an invalid value stops the start with an error naming it.
 */
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import type { AccessSettings, JwtSettings } from '../api/auth.js';
import { QUERY_LIMITS } from '../api/limits.js';
import { DEFAULT_CALLER_SESSIONS } from '../graph/database.js';
import type { ServerSettings } from '../api/server.js';
import { DEFAULT_SUBSCRIPTION_SETTINGS } from '../api/subscriptionServer.js';
import { onnxModelFiles } from '../embedding/onnx.js';
import { isPretrainedModel, PRETRAINED_MODELS } from '../embedding/pretrained.js';
import type { EmbedderConfig, EmbedderKind } from '../embedding/types.js';
import type { DeviceChoice } from '../native/types.js';
import { DEFAULT_MIN_FREE_DISK_MB } from '../platform/diskSpace.js';
import type { ChatEndpointConfig } from '../platform/openaiChat.js';

export type Environment = Readonly<Record<string, string | undefined>>;

export interface Config extends ServerSettings {
  dataDir: string;
  /** Where pretrained encoders are unpacked (CHRONOQL_MODELS_DIR, default <dataDir>/models). */
  modelsDir: string;
  /** Memory for the reader's encoded passages (CHRONOQL_READER_CACHE_MB). */
  readerCacheBytes: number;
  neo4j: { uri: string; user: string; password: string; database?: string } | null;
  /** The managed Neo4j, started when `neo4j` is null. */
  managedNeo4j: {
    boltPort: number | undefined;
    heapMb: number;
    /** Auth is on when set. */
    password: string | undefined;
    /** Where Java is looked for first (JAVA_HOME). */
    javaHome: string | undefined;
    /** What the JVM inherits. */
    environment: Environment;
  };
  logLevel: string;
  /** Neo4j aborts a transaction that runs longer than this (a request's queries cannot run away). */
  queryTimeoutMs: number;
  /** Neo4j sessions one API caller may hold at once (of the pool of 50). */
  callerSessions: number;
  /** Units of CPU work (encoder passes, reader runs, native scans) in flight at once, shared between callers in turn. */
  cpuSlots: number;
  /** How long to keep retrying (with backoff) a Neo4j that does not answer at start. */
  neo4jStartWaitMs: number;
  /** Ingests are refused (STORAGE_FULL) while less than this is free on the data directory's filesystem. */
  minFreeDiskBytes: number;
  /** The retrieval embedder (CHRONOQL_EMBEDDER and its settings). */
  embedder: EmbedderConfig;
  /** The sentence labeler's encoder; null keeps exact-match labeling (CHRONOQL_LABEL_ENCODER=none). */
  labelEncoder: EmbedderConfig | null;
  /** The `openai` answer generator's endpoint (CHRONOQL_GENERATOR_*), null when not configured. */
  generator: ChatEndpointConfig | null;
  /** The sentence-change verifier's endpoint (CHRONOQL_VERIFIER_*): its own setting, so a generator never changes ingest labels. */
  verifier: ChatEndpointConfig | null;
  /** Where native search runs (CHRONOQL_DEVICE). */
  device: DeviceChoice;
  /** A missing CUDA build or device is an error, never a fall back to the CPU (CHRONOQL_REQUIRE_CUDA=1). */
  requireCuda: boolean;
  /** The most GPU memory one vector index may hold; a bigger one is searched on the CPU (CHRONOQL_DEVICE_MEMORY_MB). */
  deviceMemoryCapBytes: number | undefined;
  /**
   * Who drafts the living benchmark's questions after each ingest (CHRONOQL_BENCHMARK): the local
   * generator, the OpenAI-compatible generator endpoint, or nobody (`off`: no benchmark is kept).
   */
  benchmark: 'local' | 'openai' | 'off';
  /** The API key or token `chronoql mcp` calls with, as its stdio client cannot send headers (CHRONOQL_API_KEY); null: anonymous. */
  apiKey: string | null;
}

/** A setting the environment got wrong; the message names every variable at fault. */
export class ConfigError extends RangeError {}

/** The embedder a store gets when nothing is configured. */
export const DEFAULT_EMBEDDER: EmbedderKind = 'e5-small-v2';
/** The labeler's encoder when nothing is configured: the one its thresholds and relation model were tuned with. */
const DEFAULT_LABEL_ENCODER: EmbedderKind = 'all-minilm-l6-v2';
const EMBEDDER_KINDS: readonly EmbedderKind[] = [...(Object.keys(PRETRAINED_MODELS) as EmbedderKind[]), 'wink-sif', 'openai', 'onnx'];

// A blank variable counts as unset, as shells and .env files leave them.
const blankIsUnset = (value: unknown): unknown => (typeof value === 'string' && value.trim() === '' ? undefined : value);

function integer(min: number, max: number) {
  const range = `must be an integer from ${min} to ${max}`;
  return z.preprocess(
    blankIsUnset,
    z
      .string()
      .trim()
      .regex(/^[+-]?\d+$/, range)
      .transform(Number)
      .pipe(z.number().min(min, range).max(max, range))
      .optional(),
  );
}

function positiveNumber() {
  const message = 'must be a positive number';
  return z.preprocess(
    blankIsUnset,
    z
      .string()
      .trim()
      .transform(Number)
      .pipe(z.number({ error: message }).positive(message))
      .optional(),
  );
}

function oneOf<const T extends readonly [string, ...string[]]>(values: T) {
  return z.preprocess(
    (value) => (typeof blankIsUnset(value) === 'string' ? (value as string).trim() : undefined),
    z.enum(values, { error: `must be one of ${values.join(', ')}` }).optional(),
  );
}

const text = z.preprocess(blankIsUnset, z.string().trim().optional());
const raw = z.string().optional();

const EnvironmentSchema = z.object({
  PORT: integer(0, 65535),
  HOST: text,
  CHRONOQL_DATA_DIR: text,
  CHRONOQL_MODELS_DIR: text,
  CHRONOQL_READER_CACHE_MB: integer(1, 1_000_000),
  NEO4J_URI: text,
  NEO4J_USER: raw,
  NEO4J_PASSWORD: raw,
  NEO4J_DATABASE: text,
  CHRONOQL_NEO4J_BOLT_PORT: integer(1, 65535),
  CHRONOQL_NEO4J_HEAP_MB: integer(256, 16384),
  CHRONOQL_NEO4J_PASSWORD: z.preprocess(blankIsUnset, z.string().min(8, 'must be at least 8 characters (Neo4j refuses shorter ones)').optional()),
  CHRONOQL_NEO4J_WAIT_MS: integer(0, 3_600_000),
  CHRONOQL_MIN_FREE_DISK_MB: integer(0, 1 << 30),
  JAVA_HOME: text,
  LOG_LEVEL: text,
  CHRONOQL_ENV: oneOf(['development', 'production']),
  CHRONOQL_READ_ACCESS: oneOf(['public', 'key']),
  CHRONOQL_JWT_SECRET: z.preprocess(
    blankIsUnset,
    z
      .string()
      .refine((secret) => Buffer.byteLength(secret) >= 32, 'must be at least 32 bytes (HS256 with a shorter secret is guessable)')
      .optional(),
  ),
  CHRONOQL_JWT_PUBLIC_KEY: z.preprocess(blankIsUnset, z.string().optional()),
  CHRONOQL_JWT_PUBLIC_KEY_FILE: text,
  CHRONOQL_JWT_ISSUER: text,
  CHRONOQL_JWT_AUDIENCE: text,
  CHRONOQL_JWT_ROLE_CLAIM: text,
  CHRONOQL_RATE_LIMIT: integer(1, 10_000_000),
  CHRONOQL_COST_BUDGET: integer(QUERY_LIMITS.maxCost, 1_000_000_000),
  CHRONOQL_CALLER_SESSIONS: integer(1, 50),
  CHRONOQL_CPU_SLOTS: integer(1, 1024),
  CHRONOQL_ALLOWED_ORIGINS: raw,
  CHRONOQL_QUERY_TIMEOUT_MS: integer(100, 3_600_000),
  CHRONOQL_WS_MAX_CONNECTIONS: integer(1, 1_000_000),
  CHRONOQL_WS_MAX_CONNECTIONS_PER_ADDRESS: integer(1, 1_000_000),
  CHRONOQL_SLOW_SUBSCRIBER_MS: integer(1_000, 3_600_000),
  CHRONOQL_DEVICE: z.preprocess(
    (value) => (typeof value === 'string' ? value.trim().toLowerCase() || undefined : value),
    z.enum(['auto', 'cpu', 'cuda'], { error: 'must be cpu, cuda or auto' }).optional(),
  ),
  CHRONOQL_REQUIRE_CUDA: oneOf(['0', '1']),
  CHRONOQL_DEVICE_MEMORY_MB: integer(1, 1 << 30),
  CHRONOQL_EMBEDDER: oneOf(EMBEDDER_KINDS as unknown as [string, ...string[]]),
  CHRONOQL_LABEL_ENCODER: oneOf(['none', ...EMBEDDER_KINDS] as [string, ...string[]]),
  CHRONOQL_EMBED_THREADS: integer(1, 1024),
  CHRONOQL_WINK_VECTORS_DIR: text,
  CHRONOQL_SIF_STATE: text,
  CHRONOQL_SIF_A: positiveNumber(),
  CHRONOQL_OPENAI_BASE_URL: text,
  OPENAI_BASE_URL: text,
  CHRONOQL_OPENAI_MODEL: text,
  CHRONOQL_OPENAI_API_KEY: text,
  OPENAI_API_KEY: text,
  CHRONOQL_OPENAI_DIMENSION: integer(1, 1_000_000),
  CHRONOQL_OPENAI_BATCH_SIZE: integer(1, 1_000_000),
  CHRONOQL_OPENAI_MAX_RETRIES: integer(0, 1_000),
  CHRONOQL_OPENAI_TIMEOUT_MS: integer(1, 3_600_000),
  CHRONOQL_ONNX_MODEL_DIR: text,
  CHRONOQL_ONNX_POOLING: oneOf(['mean', 'cls']),
  CHRONOQL_ONNX_QUERY_PREFIX: raw,
  CHRONOQL_ONNX_PASSAGE_PREFIX: raw,
  CHRONOQL_ONNX_MAX_LENGTH: integer(3, 1_000_000),
  CHRONOQL_ONNX_BATCH_SIZE: integer(1, 1_000_000),
  CHRONOQL_GENERATOR_BASE_URL: text,
  CHRONOQL_GENERATOR_MODEL: text,
  CHRONOQL_GENERATOR_API_KEY: text,
  CHRONOQL_VERIFIER_BASE_URL: text,
  CHRONOQL_VERIFIER_MODEL: text,
  CHRONOQL_VERIFIER_API_KEY: text,
  CHRONOQL_BENCHMARK: oneOf(['local', 'openai', 'off']),
  CHRONOQL_REPORTS_DIR: text,
  CHRONOQL_API_KEY: text,
});

type Settings = z.infer<typeof EnvironmentSchema>;

/**
 * Reads the configuration from an environment: the process's own by default; benchmarks and
 * tests pass a copy with their overrides.
 */
export function loadConfig(environment: Environment = process.env): Config {
  const parsed = EnvironmentSchema.safeParse(environment);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      const name = String(issue.path[0]);
      return `${name} ${issue.message}, got "${environment[name]}"`;
    });
    throw new ConfigError(problems.join('; '));
  }
  const env = parsed.data;
  const dataDir = resolve(env.CHRONOQL_DATA_DIR ?? '.chronoql');
  const modelsDir = resolve(env.CHRONOQL_MODELS_DIR ?? join(dataDir, 'models'));
  const embedderKind = (env.CHRONOQL_EMBEDDER ?? DEFAULT_EMBEDDER) as EmbedderKind;
  const labelKind = env.CHRONOQL_LABEL_ENCODER ?? DEFAULT_LABEL_ENCODER;
  const generator = chatEndpoint(env.CHRONOQL_GENERATOR_BASE_URL, env.CHRONOQL_GENERATOR_MODEL, env.CHRONOQL_GENERATOR_API_KEY);
  const requireCuda = env.CHRONOQL_REQUIRE_CUDA === '1';
  if (requireCuda && env.CHRONOQL_DEVICE === 'cpu') {
    throw new ConfigError('CHRONOQL_REQUIRE_CUDA=1 asks for the GPU and CHRONOQL_DEVICE=cpu keeps searches off it: set one of them');
  }
  if (env.CHRONOQL_BENCHMARK === 'openai' && !generator) {
    throw new ConfigError(
      'CHRONOQL_BENCHMARK=openai drafts questions on the generator endpoint: set CHRONOQL_GENERATOR_BASE_URL and CHRONOQL_GENERATOR_MODEL, got none',
    );
  }
  return {
    port: env.PORT ?? 4000,
    host: env.HOST ?? '127.0.0.1',
    dataDir,
    modelsDir,
    readerCacheBytes: (env.CHRONOQL_READER_CACHE_MB ?? 256) * 1024 * 1024,
    neo4j: env.NEO4J_URI ? { uri: env.NEO4J_URI, user: env.NEO4J_USER ?? 'neo4j', password: env.NEO4J_PASSWORD ?? '', database: env.NEO4J_DATABASE } : null,
    managedNeo4j: {
      boltPort: env.CHRONOQL_NEO4J_BOLT_PORT,
      heapMb: env.CHRONOQL_NEO4J_HEAP_MB ?? 2048,
      password: env.CHRONOQL_NEO4J_PASSWORD,
      javaHome: env.JAVA_HOME,
      environment,
    },
    logLevel: env.LOG_LEVEL ?? 'info',
    mode: env.CHRONOQL_ENV ?? 'development',
    access: { readAccess: env.CHRONOQL_READ_ACCESS ?? 'public', jwt: jwtSettings(env) } satisfies AccessSettings,
    rateLimitPerMinute: env.CHRONOQL_RATE_LIMIT ?? 6000,
    // Six of the costliest queries a minute (a batch of 256 questions costs about 25,000).
    costPerMinute: env.CHRONOQL_COST_BUDGET ?? 6 * QUERY_LIMITS.maxCost,
    allowedOrigins: (env.CHRONOQL_ALLOWED_ORIGINS ?? '')
      .split(',')
      .map((origin) => origin.trim())
      .filter(Boolean),
    queryTimeoutMs: env.CHRONOQL_QUERY_TIMEOUT_MS ?? 15_000,
    callerSessions: env.CHRONOQL_CALLER_SESSIONS ?? DEFAULT_CALLER_SESSIONS,
    cpuSlots: env.CHRONOQL_CPU_SLOTS ?? availableParallelism(),
    subscriptions: {
      ...DEFAULT_SUBSCRIPTION_SETTINGS,
      maxConnections: env.CHRONOQL_WS_MAX_CONNECTIONS ?? DEFAULT_SUBSCRIPTION_SETTINGS.maxConnections,
      maxConnectionsPerAddress: env.CHRONOQL_WS_MAX_CONNECTIONS_PER_ADDRESS ?? DEFAULT_SUBSCRIPTION_SETTINGS.maxConnectionsPerAddress,
      slowSubscriberMs: env.CHRONOQL_SLOW_SUBSCRIBER_MS ?? DEFAULT_SUBSCRIPTION_SETTINGS.slowSubscriberMs,
    },
    neo4jStartWaitMs: env.CHRONOQL_NEO4J_WAIT_MS ?? 60_000,
    minFreeDiskBytes: (env.CHRONOQL_MIN_FREE_DISK_MB ?? DEFAULT_MIN_FREE_DISK_MB) * 1024 * 1024,
    embedder: embedderConfig(embedderKind, env, { dataDir, modelsDir }, 'CHRONOQL_EMBEDDER'),
    labelEncoder: labelKind === 'none' ? null : embedderConfig(labelKind as EmbedderKind, env, { dataDir, modelsDir }, 'CHRONOQL_LABEL_ENCODER'),
    generator,
    verifier: chatEndpoint(env.CHRONOQL_VERIFIER_BASE_URL, env.CHRONOQL_VERIFIER_MODEL, env.CHRONOQL_VERIFIER_API_KEY),
    device: env.CHRONOQL_DEVICE ?? 'auto',
    requireCuda,
    deviceMemoryCapBytes: env.CHRONOQL_DEVICE_MEMORY_MB === undefined ? undefined : env.CHRONOQL_DEVICE_MEMORY_MB * 1024 * 1024,
    benchmark: env.CHRONOQL_BENCHMARK ?? 'local',
    // The report the server shows at /reports.
    reportsDir: resolve(env.CHRONOQL_REPORTS_DIR ?? join(dataDir, 'reports')),
    apiKey: env.CHRONOQL_API_KEY ?? null,
  };
}

/** JWTs are accepted when a secret (HS256) or a public key (RS256) is set, with an issuer and an audience. */
function jwtSettings(env: Settings): JwtSettings | null {
  const secret = env.CHRONOQL_JWT_SECRET;
  const keyFile = env.CHRONOQL_JWT_PUBLIC_KEY_FILE;
  const publicKey = keyFile ? readKeyFile(keyFile) : env.CHRONOQL_JWT_PUBLIC_KEY;
  if (!secret && !publicKey) return null;
  if (secret && publicKey) throw new ConfigError('set CHRONOQL_JWT_SECRET (HS256) or CHRONOQL_JWT_PUBLIC_KEY[_FILE] (RS256), not both');
  const issuer = env.CHRONOQL_JWT_ISSUER;
  const audience = env.CHRONOQL_JWT_AUDIENCE;
  if (!issuer || !audience) throw new ConfigError('JWTs need CHRONOQL_JWT_ISSUER and CHRONOQL_JWT_AUDIENCE: tokens are checked against both');
  return { algorithm: secret ? 'HS256' : 'RS256', key: (secret ?? publicKey)!, issuer, audience, roleClaim: env.CHRONOQL_JWT_ROLE_CLAIM ?? 'role' };
}

function readKeyFile(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(`CHRONOQL_JWT_PUBLIC_KEY_FILE: cannot read "${file}" (${(error as Error).message})`);
  }
}

/** The settings of an embedder of this kind; `variable` is the one that chose it, for the error messages. */
function embedderConfig(kind: EmbedderKind, env: Settings, paths: { dataDir: string; modelsDir: string }, variable: string): EmbedderConfig {
  const threads = env.CHRONOQL_EMBED_THREADS;
  if (isPretrainedModel(kind)) return { kind, modelsDir: paths.modelsDir, threads };
  switch (kind) {
    case 'wink-sif': {
      const state = env.CHRONOQL_SIF_STATE;
      return {
        kind,
        dataDir: paths.dataDir,
        cacheDir: env.CHRONOQL_WINK_VECTORS_DIR ?? join(paths.dataDir, 'embeddings', 'wink-sg-100d'),
        stateFile: state === 'none' ? null : (state ?? join(paths.dataDir, 'embeddings', 'wink-sif-state.json')),
        a: env.CHRONOQL_SIF_A,
      };
    }
    case 'openai': {
      const baseUrl = env.CHRONOQL_OPENAI_BASE_URL ?? env.OPENAI_BASE_URL;
      const model = env.CHRONOQL_OPENAI_MODEL;
      if (!baseUrl) throw new ConfigError(`${variable}=openai needs CHRONOQL_OPENAI_BASE_URL (e.g. http://127.0.0.1:11434 for Ollama)`);
      if (!model) throw new ConfigError(`${variable}=openai needs CHRONOQL_OPENAI_MODEL (e.g. nomic-embed-text)`);
      return {
        kind,
        baseUrl,
        model,
        apiKey: env.CHRONOQL_OPENAI_API_KEY ?? env.OPENAI_API_KEY,
        dimension: env.CHRONOQL_OPENAI_DIMENSION,
        batchSize: env.CHRONOQL_OPENAI_BATCH_SIZE,
        maxRetries: env.CHRONOQL_OPENAI_MAX_RETRIES,
        timeoutMs: env.CHRONOQL_OPENAI_TIMEOUT_MS,
      };
    }
    case 'onnx': {
      const modelDir = env.CHRONOQL_ONNX_MODEL_DIR;
      if (!modelDir) throw new ConfigError(`${variable}=onnx needs CHRONOQL_ONNX_MODEL_DIR (a directory with model.onnx and tokenizer.json)`);
      return {
        kind,
        ...onnxModelFiles(modelDir),
        pooling: env.CHRONOQL_ONNX_POOLING ?? 'mean',
        queryPrefix: env.CHRONOQL_ONNX_QUERY_PREFIX ?? '',
        passagePrefix: env.CHRONOQL_ONNX_PASSAGE_PREFIX ?? '',
        maxLength: env.CHRONOQL_ONNX_MAX_LENGTH,
        batchSize: env.CHRONOQL_ONNX_BATCH_SIZE,
        threads,
      };
    }
  }
}

/** A chat endpoint set by its base URL (with its model and key), or null when no base URL is set. */
function chatEndpoint(baseUrl: string | undefined, model: string | undefined, apiKey: string | undefined): ChatEndpointConfig | null {
  return baseUrl ? { baseUrl, model: model ?? '', apiKey } : null;
}
