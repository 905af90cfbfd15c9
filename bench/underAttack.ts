/**
 * Responsiveness under attack (issues 21 and 30): while attackers send costly bodies in a loop,
 * another client (with its own API key) reads facts. Its p99 and error count are the result; the
 * attackers' answers are tallied by code. The attackers of issue 30 come from three addresses of
 * different /24 prefixes (127.0.1.1, 127.0.2.1, 127.0.3.1: all loopback), so each has budgets of
 * its own, and send bodies just under the cost limit, over HTTP and over WebSocket. The server
 * runs as its own process with its default limits, on the demo corpus.
 */
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { createApiKey, Role } from '../src/api/auth.js';
import { demoSnapshots } from '../src/ingest/demoCorpus.js';
import { readSnapshotFile } from '../src/ingest/snapshotReader.js';
import { projectRoot } from '../src/platform/paths.js';
import { machine, openBenchRuntime, percentile, writeResult } from './common.js';
import { startServerProcess, stopServerProcess } from './load.js';

interface Body {
  query: string;
  variables?: Record<string, unknown>;
}

const FAN_OUT = `{ article(id:"France") { sentences { article { sentences { article { sentences { article { sentences { article { ${Array.from({ length: 20 }, (_, i) => `t${i + 1}: text`).join(' ')} } } } } } } } } } }`;
const WORDS_150 = Array.from({ length: 150 }, (_, i) => ['minister', 'republic', 'president', 'capital', 'election', 'party'][i % 6]).join(' ');
/** 20 aliases × batchSearch of 256 queries of 150 words (445 KB), as issue 21's probe sent it. */
const SEARCH_FLOOD: Body = {
  query: `query($q: [String!]!) { ${Array.from({ length: 20 }, (_, i) => `a${i}: batchSearch(queries: $q, mode: LEXICAL) { id text score }`).join(' ')} }`,
  variables: { q: Array.from({ length: 256 }, () => WORDS_150) },
};
/** 20 aliases × batchAsk of 256 questions with k 50 (the RILM questions of the probe). */
const ASK_FLOOD: Body = {
  query: `query($q: [AskInput!]!) { ${Array.from({ length: 20 }, (_, i) => `a${i}: batchAsk(questions: $q) { text }`).join(' ')} }`,
  variables: { q: Array.from({ length: 256 }, (_, i) => ({ question: `Who was the prime minister of France in ${1950 + (i % 70)}?`, k: 50 })) },
};
/** The largest body the limits let through: one batch of 256 long searches. */
const LARGEST_ALLOWED: Body = {
  query: `query($q: [String!]!) { batchSearch(queries: $q, mode: LEXICAL) { id text score } }`,
  variables: SEARCH_FLOOD.variables,
};
const FACT: Body = { query: 'query($s: ID!, $a: String!) { fact(subject: $s, attribute: $a) { value } }', variables: { s: 'France', a: 'Prime Minister' } };

const TOPICS = [
  'prime minister',
  'president',
  'capital',
  'chancellor',
  'election',
  'parliament',
  'senate',
  'currency',
  'chief executive',
  'football club',
  'stadium',
  'population',
];
const PLACES = ['France', 'Germany', 'Poland', 'Italy', 'Spain', 'Boeing', 'Intel', 'Liverpool', 'Starbucks', 'Japan', 'Canada', 'Brazil'];
/**
 * Issue 30's search body: aliases of batchSearch (HYBRID) with 256 distinct queries each, k 1, as
 * many as the cost limit lets through. The issue's 17 aliases cost 47,872; selecting `id score`
 * they cost 52,224 on 990c8eb and now alike, and are refused, so 15 (46,080 of 50,000).
 */
function searchBody(seed: number): Body {
  const aliases = Array.from({ length: 15 }, (_, a) => a);
  return {
    query: `query(${aliases.map((a) => `$q${a}: [String!]!`).join(', ')}) { ${aliases.map((a) => `a${a}: batchSearch(queries: $q${a}, k: 1) { id score }`).join(' ')} }`,
    variables: Object.fromEntries(
      aliases.map((a) => [
        `q${a}`,
        Array.from({ length: 256 }, (_, i) => `${TOPICS[(i + a) % TOPICS.length]} of ${PLACES[(i * 7 + a) % PLACES.length]} ${seed}-${a}-${i}`),
      ]),
    ),
  };
}
/** Issue 30's ask body: 14 aliases of batchAsk with 59 distinct questions each (cost about 47,000). */
function askBody(seed: number): Body {
  const aliases = Array.from({ length: 14 }, (_, a) => a);
  return {
    query: `query(${aliases.map((a) => `$q${a}: [AskInput!]!`).join(', ')}) { ${aliases.map((a) => `a${a}: batchAsk(questions: $q${a}) { text }`).join(' ')} }`,
    variables: Object.fromEntries(
      aliases.map((a) => [
        `q${a}`,
        Array.from({ length: 59 }, (_, i) => ({
          question: `Who was the ${TOPICS[(i + a) % TOPICS.length]} of ${PLACES[(i * 5 + a) % PLACES.length]} in ${1990 + ((i + seed) % 35)}?`,
        })),
      ]),
    ),
  };
}
/** Three client addresses in three /24 prefixes (anonymous callers are grouped by prefix). */
const ATTACKER_ADDRESSES = ['127.0.1.1', '127.0.2.1', '127.0.3.1'];

interface Outcome {
  ms: number;
  code: string;
}

/** POSTs over a connection from `localAddress` (node:http, since fetch cannot choose the source address). */
function post(url: string, body: Body, options: { token?: string; localAddress?: string } = {}): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const sent = httpRequest(
      url,
      {
        method: 'POST',
        localAddress: options.localAddress,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
          ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
        },
        timeout: 120_000,
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
        response.on('error', reject);
      },
    );
    sent.on('timeout', () => sent.destroy(new Error('timed out')));
    sent.on('error', reject);
    sent.end(payload);
  });
}

function codeOf(status: number, text: string): string {
  try {
    const answer = JSON.parse(text) as { errors?: Array<{ extensions?: { code?: string } }> };
    return answer.errors?.[0]?.extensions?.code ?? (status === 200 ? 'OK' : `HTTP_${status}`);
  } catch {
    return `HTTP_${status}`;
  }
}

async function send(url: string, body: Body, options: { token?: string; localAddress?: string } = {}): Promise<Outcome> {
  const started = performance.now();
  try {
    const { status, text } = await post(url, body, options);
    return { ms: performance.now() - started, code: codeOf(status, text) };
  } catch (error) {
    return { ms: performance.now() - started, code: (error as Error).name };
  }
}

/** A graphql-ws client whose socket connects from `localAddress`. */
function socketFrom(localAddress: string): typeof WebSocket {
  return class extends WebSocket {
    constructor(address: string, protocols?: string | string[]) {
      super(address, protocols, { localAddress });
    }
  } as typeof WebSocket;
}

/** Sends `body` over one graphql-ws connection from `localAddress`, one operation at a time, until `until`. */
async function socketLoop(url: string, body: () => Body, until: number, token: string, localAddress: string): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  while (performance.now() < until) {
    const client = createClient({
      url: url.replace(/^http/, 'ws'),
      webSocketImpl: socketFrom(localAddress),
      connectionParams: { Authorization: `Bearer ${token}` },
      retryAttempts: 0,
      lazy: true,
    });
    try {
      while (performance.now() < until) {
        const started = performance.now();
        const { query, variables } = body();
        const code = await new Promise<string>((resolve) => {
          let outcome = 'OK';
          client.subscribe(
            { query, variables },
            {
              next: (result) => {
                const errors = result.errors as Array<{ extensions?: { code?: string } }> | undefined;
                if (errors?.length) outcome = errors[0]?.extensions?.code ?? 'ERROR';
              },
              error: (error) => resolve(`CLOSED_${(error as { code?: number }).code ?? 'ERROR'}`),
              complete: () => resolve(outcome),
            },
          );
        });
        outcomes.push({ ms: performance.now() - started, code });
        if (code.startsWith('CLOSED_')) break;
      }
    } finally {
      await client.dispose();
    }
  }
  return outcomes;
}

/** Sends a body over and over until `until`, one request at a time; the outcomes by code. */
async function loop(url: string, body: () => Body, until: number, options: { token?: string; localAddress?: string } = {}): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  while (performance.now() < until) outcomes.push(await send(url, body(), options));
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

type Attacker = (until: number) => Promise<Outcome[]>;

/** The resident memory of a process, from /proc (Linux), in MiB; NaN (null in the result) once it has died, as 990c8eb's server did. */
function residentMb(pid: number): number {
  try {
    const kb = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return Number(kb) / 1024;
  } catch {
    return Number.NaN;
  }
}

/**
 * Issue 30's anonymous query over an article of `sentences` sentences, sent right after the
 * article is ingested beside the running server (its list sizes may not know it yet, and then
 * the response budget must stop it) and again 3 s later (the estimate should refuse it): what
 * each answer was, how long it took, and how far the server's memory rose meanwhile.
 */
async function hugeFanOut(url: string, pid: number, ingest: (id: string, text: string) => Promise<void>, sentences: number) {
  const id = `Huge${sentences}`;
  await ingest(id, Array.from({ length: sentences }, (_, i) => `Sentence ${i} of the huge article says something about its republic.`).join(' '));
  const query = { query: `{ article(id: "${id}") { sentences { article { sentences { text } } } } }` };
  const attempts = [];
  for (const waitMs of [0, 3_000]) {
    await new Promise((resolve) => setTimeout(resolve, waitMs));
    const before = residentMb(pid);
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, residentMb(pid))), 20);
    const outcome = await send(url, query);
    clearInterval(sampler);
    attempts.push({
      afterIngestMs: waitMs,
      code: outcome.code,
      ms: Math.round(outcome.ms),
      rssBeforeMb: Math.round(before),
      rssPeakGrowthMb: Math.round(peak - before),
    });
  }
  return { sentences, attempts };
}

/** The victim's fact reads for `seconds`, while the attackers run. */
async function phase(url: string, token: string, seconds: number, attackers: Attacker[]) {
  const until = performance.now() + seconds * 1000;
  const [victim, ...attacks] = await Promise.all([loop(url, () => FACT, until, { token }), ...attackers.map((attack) => attack(until))]);
  return { victim: latency(victim!), attackers: attacks.map((outcomes) => ({ ...tally(outcomes), p50Ms: latency(outcomes).p50Ms })) };
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
    const attackerTokens = await Promise.all(
      ATTACKER_ADDRESSES.map(async (_, i) => (await createApiKey(runtime.services.db, `attacker ${i}`, Role.READER)).token),
    );
    server = await startServerProcess({ CHRONOQL_DATA_DIR: join(projectRoot(), '.chronoql-bench'), NEO4J_URI: '', PORT: '0', LOG_LEVEL: 'warn' });
    const url = server.url;
    let seed = 0;
    const fresh = (make: (seed: number) => Body) => () => make((seed += 1));
    const overHttp = (make: (seed: number) => Body): Attacker[] =>
      ATTACKER_ADDRESSES.map((localAddress) => (until) => loop(url, fresh(make), until, { localAddress }));
    const overSocket = (make: (seed: number) => Body): Attacker[] =>
      ATTACKER_ADDRESSES.map((localAddress, i) => (until) => socketLoop(url, fresh(make), until, attackerTokens[i]!, localAddress));
    const anonymous =
      (body: Body): Attacker =>
      (until) =>
        loop(url, () => body, until);

    await phase(url, token, 5, []); // warm-up
    const quiet = await phase(url, token, Math.min(20, options.seconds), []);
    const floods = await phase(url, token, options.seconds, [
      ...Array.from({ length: 4 }, () => anonymous({ query: FAN_OUT })),
      anonymous(SEARCH_FLOOD),
      anonymous(ASK_FLOOD),
    ]);
    const searches = await phase(url, token, options.seconds, overHttp(searchBody));
    const questions = await phase(url, token, options.seconds, overHttp(askBody));
    const both = await phase(url, token, options.seconds, [...overHttp(searchBody), ...overHttp(askBody)]);
    const sockets = await phase(url, token, options.seconds, [...overSocket(searchBody), ...overSocket(askBody)]);
    const heaviestAllowed = await phase(url, token, options.seconds, [anonymous(LARGEST_ALLOWED), anonymous(LARGEST_ALLOWED)]);
    const ingestBeside = async (id: string, text: string) => {
      await runtime.services.ingest.ingest([{ id, title: id, text, infobox: {} }], { takenAt: new Date(), source: 'under-attack bench' });
    };
    const hugeArticles = [await hugeFanOut(url, server.child.pid!, ingestBeside, 3_000), await hugeFanOut(url, server.child.pid!, ingestBeside, 20_000)];
    const result = {
      benchmark: 'under-attack',
      machine: machine(),
      setup: `demo corpus; one victim reading fact(France, Prime Minister) with its own key over HTTP, one request at a time; each attacker a loop of one request at a time; ${options.seconds} s per attacked phase; issue 30's attackers from ${ATTACKER_ADDRESSES.join(', ')}`,
      quiet: quiet.victim,
      floods: {
        attackers: 'anonymous, one address: 4 × list fan-out, 1 × 20 aliases of batchSearch(256 × 150 words), 1 × 20 aliases of batchAsk(256, k 50)',
        victim: floods.victim,
        answers: floods.attackers,
      },
      searchBodies: {
        attackers: '3 addresses, anonymous, HTTP: 15 aliases × batchSearch(256 distinct queries, HYBRID, k 1)',
        victim: searches.victim,
        answers: searches.attackers,
      },
      askBodies: {
        attackers: '3 addresses, anonymous, HTTP: 14 aliases × batchAsk(59 distinct questions)',
        victim: questions.victim,
        answers: questions.attackers,
      },
      bothBodies: { attackers: '6 loops: the search and the ask bodies from each of the 3 addresses, HTTP', victim: both.victim, answers: both.attackers },
      overWebSocket: {
        attackers: '6 loops over graphql-ws, a reader key per address: the search and the ask bodies from each of the 3 addresses',
        victim: sockets.victim,
        answers: sockets.attackers,
      },
      heaviestAllowed: {
        attackers: '2 × one batchSearch of 256 queries of 150 words (LEXICAL)',
        victim: heaviestAllowed.victim,
        answers: heaviestAllowed.attackers,
      },
      hugeArticles: {
        query:
          '{ article(id) { sentences { article { sentences { text } } } } }, anonymous, right after the article is ingested beside the server and 3 s later',
        results: hugeArticles,
      },
    };
    await writeResult('under-attack', result);
    return result;
  } finally {
    if (server) await stopServerProcess(server);
    await runtime.close();
  }
}
