/**
 * Responsiveness under attack (issue 21): while anonymous clients send the list fan-out query
 * and the pool-starving batch bodies in a loop, another client (with its own API key) reads
 * facts. Its p99 and error count are the result; the attackers' answers are tallied by code.
 * The server runs as its own process with its default limits, on the demo corpus.
 */
import { join } from 'node:path';
import { createApiKey, Role } from '../src/api/auth.js';
import { demoSnapshots } from '../src/ingest/demoCorpus.js';
import { readSnapshotFile } from '../src/ingest/snapshotReader.js';
import { projectRoot } from '../src/platform/paths.js';
import { machine, openBenchRuntime, percentile, writeResult } from './common.js';
import { startServerProcess, stopServerProcess } from './load.js';

const FAN_OUT = `{ article(id:"France") { sentences { article { sentences { article { sentences { article { sentences { article { ${Array.from({ length: 20 }, (_, i) => `t${i + 1}: text`).join(' ')} } } } } } } } } } }`;
const WORDS_150 = Array.from({ length: 150 }, (_, i) => ['minister', 'republic', 'president', 'capital', 'election', 'party'][i % 6]).join(' ');
/** 20 aliases × batchSearch of 256 queries of 150 words (445 KB), as the probe sent it. */
const SEARCH_FLOOD = {
  query: `query($q: [String!]!) { ${Array.from({ length: 20 }, (_, i) => `a${i}: batchSearch(queries: $q, mode: LEXICAL) { id text score }`).join(' ')} }`,
  variables: { q: Array.from({ length: 256 }, () => WORDS_150) },
};
/** 20 aliases × batchAsk of 256 questions with k 50 (the RILM questions of the probe). */
const ASK_FLOOD = {
  query: `query($q: [AskInput!]!) { ${Array.from({ length: 20 }, (_, i) => `a${i}: batchAsk(questions: $q) { text }`).join(' ')} }`,
  variables: { q: Array.from({ length: 256 }, (_, i) => ({ question: `Who was the prime minister of France in ${1950 + (i % 70)}?`, k: 50 })) },
};
/** The largest body the limits let through: one batch of 256 long searches. */
const LARGEST_ALLOWED = { query: `query($q: [String!]!) { batchSearch(queries: $q, mode: LEXICAL) { id text score } }`, variables: SEARCH_FLOOD.variables };
const FACT = { query: 'query($s: ID!, $a: String!) { fact(subject: $s, attribute: $a) { value } }', variables: { s: 'France', a: 'Prime Minister' } };

interface Outcome {
  ms: number;
  code: string;
}

async function send(url: string, body: { query: string; variables?: Record<string, unknown> }, token?: string): Promise<Outcome> {
  const started = performance.now();
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(120_000),
    });
    const answer = (await response.json()) as { errors?: Array<{ extensions?: { code?: string } }> };
    return { ms: performance.now() - started, code: answer.errors?.[0]?.extensions?.code ?? (response.ok ? 'OK' : `HTTP_${response.status}`) };
  } catch (error) {
    return { ms: performance.now() - started, code: (error as Error).name };
  }
}

/** Sends `body` over and over until `until`, one request at a time; the outcomes by code. */
async function loop(url: string, body: { query: string; variables?: Record<string, unknown> }, until: number, token?: string): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  while (performance.now() < until) outcomes.push(await send(url, body, token));
  return outcomes;
}

function tally(outcomes: Outcome[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const { code } of outcomes) counts[code] = (counts[code] ?? 0) + 1;
  return counts;
}

function latency(outcomes: Outcome[]): Record<string, number> {
  const sorted = outcomes.map((outcome) => outcome.ms).sort((a, b) => a - b);
  return {
    requests: outcomes.length,
    errors: outcomes.filter((outcome) => outcome.code !== 'OK').length,
    p50Ms: Math.round(percentile(sorted, 50)),
    p99Ms: Math.round(percentile(sorted, 99)),
    maxMs: Math.round(sorted.at(-1) ?? 0),
  };
}

/** The victim's fact reads for `seconds`, while `attackers` run; each attacker is one loop. */
async function phase(url: string, token: string, seconds: number, attackers: Array<{ body: { query: string; variables?: Record<string, unknown> } }>) {
  const until = performance.now() + seconds * 1000;
  const [victim, ...attacks] = await Promise.all([loop(url, FACT, until, token), ...attackers.map(({ body }) => loop(url, body, until))]);
  return { victim: latency(victim!), attackers: attacks.map(tally) };
}

export async function runUnderAttackBenchmark(options: { seconds: number }): Promise<Record<string, unknown>> {
  const runtime = await openBenchRuntime();
  let server: Awaited<ReturnType<typeof startServerProcess>> | undefined;
  try {
    for (const snapshot of await demoSnapshots()) {
      await runtime.services.ingest.ingest(await readSnapshotFile(snapshot.file), { takenAt: snapshot.takenAt, source: snapshot.source });
    }
    await runtime.services.retrieval.catchUp();
    const { token } = await createApiKey(runtime.services.db, 'victim', Role.READER);
    server = await startServerProcess({ CHRONOQL_DATA_DIR: join(projectRoot(), '.chronoql-bench'), NEO4J_URI: '', PORT: '0', LOG_LEVEL: 'warn' });
    const url = server.url;
    await phase(url, token, 5, []); // warm-up
    const quiet = await phase(url, token, Math.min(20, options.seconds), []);
    const attack = await phase(url, token, options.seconds, [
      ...Array.from({ length: 4 }, () => ({ body: { query: FAN_OUT } })),
      { body: SEARCH_FLOOD },
      { body: ASK_FLOOD },
    ]);
    const heaviestAllowed = await phase(url, token, options.seconds, [{ body: LARGEST_ALLOWED }, { body: LARGEST_ALLOWED }]);
    const result = {
      benchmark: 'under-attack',
      machine: machine(),
      setup: `demo corpus; one victim reading fact(France, Prime Minister) with its own key, one request at a time; attackers anonymous, each a loop of one request at a time; ${options.seconds} s per attacked phase`,
      quiet: quiet.victim,
      attack: {
        attackers: '4 × list fan-out, 1 × 20 aliases of batchSearch(256 × 150 words), 1 × 20 aliases of batchAsk(256, k 50)',
        victim: attack.victim,
        answers: attack.attackers,
      },
      heaviestAllowed: {
        attackers: '2 × one batchSearch of 256 queries of 150 words (the largest body within the cost limit)',
        victim: heaviestAllowed.victim,
        answers: heaviestAllowed.attackers,
      },
    };
    await writeResult('under-attack', result);
    return result;
  } finally {
    if (server) await stopServerProcess(server);
    await runtime.close();
  }
}
