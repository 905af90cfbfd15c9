import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DEFAULT_SUBSCRIBER_BUFFER } from '../ingest/changeFeed.js';
import type { AccessSettings, JwtSettings } from '../api/auth.js';

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /** Where pretrained encoders are unpacked (CHRONOQL_MODELS_DIR, default <dataDir>/models). */
  modelsDir: string;
  /** Memory for the reader's encoded passages (CHRONOQL_READER_CACHE_MB). */
  readerCacheBytes: number;
  neo4j: { uri: string; user: string; password: string; database?: string } | null;
  managedBoltPort: number | undefined;
  managedHeapMb: number;
  /** The managed Neo4j's password (auth on when set). */
  managedPassword: string | undefined;
  logLevel: string;
  /** `production` turns off introspection and the explorer. */
  mode: 'development' | 'production';
  access: AccessSettings;
  /** GraphQL operations per minute per API key, token subject or (anonymous) client address. */
  rateLimitPerMinute: number;
  /** Browser origins allowed to open the WebSocket; empty: only the server's own. */
  allowedOrigins: string[];
  /** Neo4j aborts a transaction that runs longer than this (a request's queries cannot run away). */
  queryTimeoutMs: number;
  /** Live changes one subscriber may have waiting before it is cut off (it resumes with afterSeq). */
  subscriberBuffer: number;
  /** How long to keep retrying (with backoff) a Neo4j that does not answer at start. */
  neo4jStartWaitMs: number;
}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number | undefined, min: number, max: number): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new RangeError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

/** Reads configuration from the environment (README.md, "Configuration"). */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const uri = env.NEO4J_URI?.trim();
  const dataDir = resolve(env.CHRONOQL_DATA_DIR?.trim() || '.chronoql');
  return {
    port: integer(env, 'PORT', 4000, 0, 65535)!,
    host: env.HOST?.trim() || '127.0.0.1',
    dataDir,
    modelsDir: resolve(env.CHRONOQL_MODELS_DIR?.trim() || join(dataDir, 'models')),
    readerCacheBytes: integer(env, 'CHRONOQL_READER_CACHE_MB', 256, 1, 1_000_000)! * 1024 * 1024,
    neo4j: uri
      ? {
          uri,
          user: env.NEO4J_USER ?? 'neo4j',
          password: env.NEO4J_PASSWORD ?? '',
          database: env.NEO4J_DATABASE?.trim() || undefined,
        }
      : null,
    managedBoltPort: integer(env, 'CHRONOQL_NEO4J_BOLT_PORT', undefined, 1, 65535),
    managedHeapMb: integer(env, 'CHRONOQL_NEO4J_HEAP_MB', 2048, 256, 16384)!,
    managedPassword: managedPassword(env),
    logLevel: env.LOG_LEVEL?.trim() || 'info',
    mode: oneOf(env, 'CHRONOQL_ENV', ['development', 'production'] as const, 'development'),
    access: { readAccess: oneOf(env, 'CHRONOQL_READ_ACCESS', ['public', 'key'] as const, 'public'), jwt: jwtSettings(env) },
    rateLimitPerMinute: integer(env, 'CHRONOQL_RATE_LIMIT', 6000, 1, 10_000_000)!,
    allowedOrigins: (env.CHRONOQL_ALLOWED_ORIGINS ?? '')
      .split(',')
      .map((origin) => origin.trim())
      .filter(Boolean),
    queryTimeoutMs: integer(env, 'CHRONOQL_QUERY_TIMEOUT_MS', 15_000, 100, 3_600_000)!,
    // At least two of the change feed's pages (500 events arrive at once), so a subscriber that keeps up is never cut off.
    subscriberBuffer: integer(env, 'CHRONOQL_SUBSCRIBER_BUFFER', DEFAULT_SUBSCRIBER_BUFFER, 1_000, 10_000_000)!,
    neo4jStartWaitMs: integer(env, 'CHRONOQL_NEO4J_WAIT_MS', 60_000, 0, 3_600_000)!,
  };
}

function managedPassword(env: NodeJS.ProcessEnv): string | undefined {
  const password = env.CHRONOQL_NEO4J_PASSWORD;
  if (!password) return undefined;
  if (password.length < 8) throw new RangeError('CHRONOQL_NEO4J_PASSWORD must be at least 8 characters (Neo4j refuses shorter ones)');
  return password;
}

function oneOf<T extends string>(env: NodeJS.ProcessEnv, name: string, values: readonly T[], fallback: T): T {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  if (!values.includes(raw as T)) throw new RangeError(`${name} must be one of ${values.join(', ')}, got "${raw}"`);
  return raw as T;
}

/** JWTs are accepted when a secret (HS256) or a public key (RS256) is set, with an issuer and an audience. */
function jwtSettings(env: NodeJS.ProcessEnv): JwtSettings | null {
  const secret = env.CHRONOQL_JWT_SECRET;
  const keyFile = env.CHRONOQL_JWT_PUBLIC_KEY_FILE?.trim();
  const publicKey = keyFile ? readFileSync(keyFile, 'utf8') : env.CHRONOQL_JWT_PUBLIC_KEY;
  if (!secret && !publicKey) return null;
  if (secret && publicKey) throw new RangeError('set CHRONOQL_JWT_SECRET (HS256) or CHRONOQL_JWT_PUBLIC_KEY[_FILE] (RS256), not both');
  if (secret && Buffer.byteLength(secret) < 32) throw new RangeError('CHRONOQL_JWT_SECRET must be at least 32 bytes (HS256 with a shorter secret is guessable)');
  const issuer = env.CHRONOQL_JWT_ISSUER?.trim();
  const audience = env.CHRONOQL_JWT_AUDIENCE?.trim();
  if (!issuer || !audience) throw new RangeError('JWTs need CHRONOQL_JWT_ISSUER and CHRONOQL_JWT_AUDIENCE: tokens are checked against both');
  return {
    algorithm: secret ? 'HS256' : 'RS256',
    key: (secret ?? publicKey)!,
    issuer,
    audience,
    roleClaim: env.CHRONOQL_JWT_ROLE_CLAIM?.trim() || 'role',
  };
}
