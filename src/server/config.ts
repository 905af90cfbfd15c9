import { resolve } from 'node:path';

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  neo4j: { uri: string; user: string; password: string; database?: string } | null;
  managedBoltPort: number | undefined;
  managedHeapMb: number;
  logLevel: string;
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
  return {
    port: integer(env, 'PORT', 4000, 0, 65535)!,
    host: env.HOST?.trim() || '127.0.0.1',
    dataDir: resolve(env.CHRONOQL_DATA_DIR?.trim() || '.chronoql'),
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
    logLevel: env.LOG_LEVEL?.trim() || 'info',
  };
}
