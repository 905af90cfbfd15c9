import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { createApiKey, Role } from '../../src/api/auth.js';
import { Database } from '../../src/graph/database.js';
import { withLockFile } from '../../src/neo4jProcess/lockFile.js';
import { startManagedNeo4j } from '../../src/neo4jProcess/managedNeo4j.js';
import { startServer, type RunningServer } from '../../src/api/server.js';
import { neo4jProblem } from '../../src/api/errorReporting.js';
import { loadConfig } from '../../src/app/config.js';
import { createLogger } from '../../src/platform/logger.js';
import { openRuntime, type Runtime } from '../../src/app/runtime.js';
import { article, day, freePort, isAlive, postGraphql, runChronoql, testDataDir } from '../support/runtime.js';
import { assertLikeCleanRunOnSameStore } from '../support/storeChecks.js';

/** Polls a GraphQL server until a read succeeds (Neo4j is back); returns how long that took. */
async function untilAnswered(url: string): Promise<number> {
  const started = performance.now();
  for (;;) {
    const { body } = await postGraphql(url, '{ snapshots { id status } }');
    if (!body.errors) return performance.now() - started;
    assert.ok(performance.now() - started < 120_000, 'Neo4j came back within two minutes');
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** The managed Neo4j JVMs serving a data directory now, whoever started them: each one's pid with its parent's ("pid<ppid"). */
function launchersOf(dataDir: string): string[] {
  const store = join(dataDir, 'neo4j');
  const pids = readdirSync('/proc').filter((entry) => {
    if (!/^\d+$/.test(entry)) return false;
    const args = (() => {
      try {
        return readFileSync(join('/proc', entry, 'cmdline'), 'utf8').split('\0');
      } catch {
        return []; // gone meanwhile
      }
    })();
    return args.includes('io.chronoql.neo4j.Launcher') && args.includes(store);
  });
  const parentOf = (pid: string): string => {
    try {
      return readFileSync(join('/proc', pid, 'stat'), 'utf8')
        .split(') ')[1]!
        .split(' ')[1]!;
    } catch {
      return 'gone';
    }
  };
  // A child the JVM forks to run a command carries the JVM's command line until it execs: it is no second Neo4j.
  return pids
    .map((pid) => ({ pid, parent: parentOf(pid) }))
    .filter(({ parent }) => !pids.includes(parent))
    .map(({ pid, parent }) => `${pid}<${parent}`);
}

function capture(): { log: ReturnType<typeof createLogger>; lines: string[] } {
  const lines: string[] = [];
  return { log: createLogger('info', new Writable({ write: (chunk, _encoding, done) => (lines.push(String(chunk)), done()) })), lines };
}

/**
 * A runtime and a server on a managed Neo4j of their own, in a fresh data directory, started
 * before a describe block's tests and stopped after them (read the fields inside the tests).
 */
function serverOnOwnStore(prefix: string) {
  const dataDir = mkdtempSync(join(tmpdir(), prefix));
  const { log, lines } = capture();
  const env = {
    CHRONOQL_DATA_DIR: dataDir,
    CHRONOQL_MODELS_DIR: join(testDataDir, 'models'),
    CHRONOQL_NEO4J_HEAP_MB: '512',
    CHRONOQL_LABEL_ENCODER: process.env.CHRONOQL_LABEL_ENCODER ?? '',
    // As the reference store has it (run-tests turns the living benchmark off): the graphs are compared.
    CHRONOQL_BENCHMARK: process.env.CHRONOQL_BENCHMARK ?? '',
  };
  const store = { dataDir, env, lines, runtime: undefined as unknown as Runtime, server: undefined as unknown as RunningServer };
  before(async () => {
    store.runtime = await openRuntime(loadConfig(env), log, { changeFeed: true });
    store.server = await startServer(store.runtime, { ...loadConfig(env), port: 0, host: '127.0.0.1', log });
  });
  after(async () => {
    await store.server?.close();
    await store.runtime?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return store;
}

describe('Neo4j faults', () => {
  it('retries a Neo4j that does not answer at start with backoff, then fails with a clear error', async () => {
    const { log, lines } = capture();
    const started = performance.now();
    await assert.rejects(
      openRuntime(loadConfig({ NEO4J_URI: 'bolt://127.0.0.1:9', CHRONOQL_DATA_DIR: testDataDir, CHRONOQL_NEO4J_WAIT_MS: '2500' }), log),
      /Neo4j at bolt:\/\/127\.0\.0\.1:9 did not answer within 2500 ms/,
    );
    assert.ok(performance.now() - started >= 2_500);
    const retries = lines.filter((line) => line.includes('Neo4j is not reachable yet'));
    assert.ok(retries.length >= 2, `${retries.length} retries logged`);
  });

  it('aborts a read that runs past the query timeout, as QUERY_TIMEOUT', async () => {
    const { uri, user, password } = loadConfig(process.env).neo4j ?? { uri: '', user: '', password: '' };
    assert.ok(uri, 'the test Neo4j (NEO4J_URI)');
    const db = Database.connect(uri, user, password, undefined, { readTimeoutMs: 300 });
    try {
      const started = performance.now();
      const error = await db.run('UNWIND range(1, 2000000000) AS x RETURN count(x) AS n').then(
        () => null,
        (caught: unknown) => caught,
      );
      assert.ok(performance.now() - started < 10_000);
      assert.deepEqual(neo4jProblem(error)?.code, 'QUERY_TIMEOUT', String(error));
    } finally {
      await db.close();
    }
  });

  it('stops `chronoql serve` on SIGTERM in its own order (HTTP, feed, driver) and exits 0, not killed by the signal', { timeout: 120_000 }, async () => {
    const port = await freePort();
    const serve = runChronoql(['serve'], { PORT: String(port), CHRONOQL_DATA_DIR: testDataDir });
    for (let attempt = 0; ; attempt++) {
      const response = await fetch(`http://127.0.0.1:${port}/health`).catch(() => undefined);
      if (response?.status === 200) break;
      assert.ok(attempt < 300 && serve.child.exitCode === null, 'the server came up');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    serve.child.kill('SIGTERM');
    const { code, output } = await serve.finished;
    assert.equal(code, 0, output);
  });

  it('answers /health with "starting" while `chronoql serve` waits for Neo4j', { timeout: 60_000 }, async () => {
    const port = await freePort();
    const serve = runChronoql(['serve'], {
      NEO4J_URI: 'bolt://127.0.0.1:9',
      PORT: String(port),
      CHRONOQL_NEO4J_WAIT_MS: '30000',
      CHRONOQL_DATA_DIR: testDataDir,
    });
    try {
      let health: { status: number; body: Record<string, unknown> } | undefined;
      for (let attempt = 0; attempt < 100 && health?.body.neo4j !== 'unreachable'; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        const response = await fetch(`http://127.0.0.1:${port}/health`).catch(() => undefined);
        if (response) health = { status: response.status, body: (await response.json()) as Record<string, unknown> };
      }
      assert.equal(health?.status, 503);
      assert.equal(health?.body.status, 'starting');
      assert.equal(health?.body.neo4j, 'unreachable');
      const query = await fetch(`http://127.0.0.1:${port}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"query":"{ snapshots { id } }"}',
      });
      assert.equal(query.status, 503);
      assert.equal(((await query.json()) as { errors: Array<{ extensions: { code: string } }> }).errors[0]!.extensions.code, 'SERVICE_UNAVAILABLE');
    } finally {
      serve.child.kill('SIGTERM');
      await serve.finished;
    }
  });

  it('runs the managed Neo4j with auth when a password is set, on loopback only', { timeout: 180_000 }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'chronoql-auth-'));
    const password = 'a long test password';
    const neo4jServer = await startManagedNeo4j({ dataDir, password, heapMb: 512, javaHome: process.env.JAVA_HOME, environment: process.env });
    try {
      assert.match(neo4jServer.uri, /^bolt:\/\/127\.0\.0\.1:\d+$/);
      assert.equal(neo4jServer.password, password);
      // Two wrong tries only: a third locks the user out for 5 s (Neo4j's auth_max_failed_attempts).
      for (const wrong of ['', 'not the password']) {
        const db = Database.connect(neo4jServer.uri, 'neo4j', wrong);
        await assert.rejects(db.verify(), /unauthorized|authentication/i, `password "${wrong}"`);
        await db.close();
      }
      const db = Database.connect(neo4jServer.uri, 'neo4j', password);
      await db.verify();
      assert.deepEqual(await db.run('RETURN 1 AS one'), [{ one: 1 }]);
      await db.close();
    } finally {
      await neo4jServer.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  describe('the managed Neo4j killed while serving and ingesting', () => {
    const store = serverOnOwnStore('chronoql-faults-');
    const neo4jPid = (): number => (JSON.parse(readFileSync(join(store.dataDir, 'neo4j', 'launcher.json'), 'utf8')) as { pid: number }).pid;
    const query = (source: string) => postGraphql(store.server.url, source);

    it('fails fast during the outage, restarts Neo4j by itself, and a re-run completes the interrupted ingest', { timeout: 240_000 }, async (t) => {
      const { runtime, server, lines } = store;
      const first = Array.from({ length: 120 }, (_, i) => article(`a${i}`, `Article ${i} says one thing.`, { Value: String(i) }));
      await runtime.services.ingest.ingest(first, { takenAt: day('2024-01-01'), source: 'test' });

      // Killed while serving: requests fail within seconds with a code a client can act on.
      const { token } = await createApiKey(runtime.services.db, 'faults', Role.READER);
      const socket = createClient({
        url: server.url.replace('http', 'ws'),
        webSocketImpl: WebSocket,
        connectionParams: { Authorization: `Bearer ${token}` },
        retryAttempts: 0,
        lazy: false,
      });
      t.after(() => socket.dispose());
      await new Promise((resolve) => socket.on('connected', resolve));
      // The restart waits for the start lock, held here (as another process would hold it) while the outage
      // is looked at: an idle machine restarts Neo4j in less time than the checks below take.
      const startLock = join(store.dataDir, 'neo4j', 'start.lock');
      const { idlePid, failedAfterMs } = await withLockFile(
        startLock,
        5_000,
        () => {},
        async () => {
          const idlePid = neo4jPid();
          process.kill(idlePid, 'SIGKILL');
          while (isAlive(idlePid)) await new Promise((resolve) => setTimeout(resolve, 10));
          const started = performance.now();
          const during = await query('{ snapshots { id } }');
          const failedAfterMs = performance.now() - started;
          assert.equal(during.body.errors?.[0]?.extensions.code, 'SERVICE_UNAVAILABLE', JSON.stringify(during.body));
          assert.match(during.body.errors![0]!.message, /database is unreachable/);
          // "Retry", not "your request was wrong": 503 with Retry-After, as OVERLOADED (it was 200, with no Retry-After).
          assert.deepEqual([during.status, during.headers.get('retry-after'), during.body.errors![0]!.extensions.retryAfterSeconds], [503, '5', 5]);
          const overSocket = await new Promise<unknown>((resolve) =>
            socket.subscribe({ query: '{ snapshots { id } }' }, { next: resolve, error: resolve, complete: () => {} }),
          );
          const socketErrors = Array.isArray(overSocket) ? overSocket : (overSocket as { errors?: unknown[] }).errors;
          assert.deepEqual(
            (socketErrors?.[0] as { extensions?: unknown })?.extensions,
            { code: 'SERVICE_UNAVAILABLE', retryAfterSeconds: 5 },
            JSON.stringify(overSocket),
          );
          // A new connection whose key cannot be checked (past the 1 s key cache) is told to come back, not that the key is bad (it was 4401).
          await new Promise((resolve) => setTimeout(resolve, 1_100));
          const newcomer = createClient({
            url: server.url.replace('http', 'ws'),
            webSocketImpl: WebSocket,
            connectionParams: { Authorization: `Bearer ${token}` },
            retryAttempts: 0,
          });
          const refused = await new Promise<{ code?: number; reason?: string }>((resolve) =>
            newcomer.subscribe(
              { query: '{ snapshots { id } }' },
              { next: () => resolve({}), error: (error) => resolve(error as { code?: number }), complete: () => {} },
            ),
          );
          await newcomer.dispose();
          assert.equal(refused.code, 1013, `${refused.code} ${refused.reason}`);
          assert.match(String(refused.reason), /^Try again in 5 s: the database is unreachable/);
          assert.ok(failedAfterMs < 8_000, `failed after ${failedAfterMs.toFixed(0)} ms`);
          assert.equal((await fetch(server.url.replace('/graphql', '/health'))).status, 503);
          return { idlePid, failedAfterMs };
        },
      );
      const backAfterMs = await untilAnswered(server.url);
      assert.ok(
        lines.some((line) => line.includes('Restarted the managed Neo4j')),
        'the restart was logged',
      );
      assert.notEqual(neo4jPid(), idlePid);
      t.diagnostic(`outage while serving: failed after ${failedAfterMs.toFixed(0)} ms, answered again ${backAfterMs.toFixed(0)} ms later`);

      // Killed mid-ingest: the ingest fails with a clear error, and a re-run resumes it.
      const second = first.map((a, i) => article(a.id, `Article ${i} says another thing.`, { Value: String(i + 1) }));
      const pid = neo4jPid();
      const interrupted = runtime.services.ingest.ingest(second, {
        takenAt: day('2024-02-01'),
        source: 'test',
        batchSize: 20,
        onProgress: (done) => {
          if (done === 40) process.kill(pid, 'SIGKILL'); // two batches committed
        },
      });
      const failing = performance.now();
      await assert.rejects(interrupted, (error: Error) => /unavailable|connect|ECONNREFUSED|closed/i.test(error.message));
      t.diagnostic(`ingest failed ${(performance.now() - failing).toFixed(0)} ms after Neo4j was killed`);
      await untilAnswered(server.url);
      const resumed = await runtime.services.ingest.ingest(second, { takenAt: day('2024-02-01'), source: 'test', batchSize: 20, leaseWaitMs: 60_000 });
      assert.equal(resumed.articlesResumed, 40);
      assert.equal(resumed.snapshot.status, 'COMPLETE');
      const { body } = await query('{ snapshots { id status } fact(subject: "a5", attribute: "Value") { value } changes { totalCount } }');
      assert.deepEqual(body.data.snapshots, [
        { id: '2024-01-01', status: 'COMPLETE' },
        { id: '2024-02-01', status: 'COMPLETE' },
      ]);
      assert.equal(body.data.fact.value, '6');
      // 120 ARTICLE_ADDED, then per article one SENTENCE_CHANGED or NEW (+ DELETED) and one FACT_UPDATED, each once.
      const [{ updated }] = await runtime.services.db.run<{ updated: number }>(`MATCH (e:ChangeEvent {kind: 'FACT_UPDATED'}) RETURN count(e) AS updated`);
      assert.equal(updated, 120);
      await assertLikeCleanRunOnSameStore(runtime, first, second);
    });
  });

  describe('a CLI ingest started while the server restarts its Neo4j (issue 21, case 6)', () => {
    const store = serverOnOwnStore('chronoql-race-');

    it('runs one Neo4j for the data directory, used by both, and the server answers again', { timeout: 300_000 }, async (t) => {
      const { runtime, server, lines, dataDir, env } = store;
      const first = Array.from({ length: 40 }, (_, i) => article(`r${i}`, `Article ${i} says one thing.`, { Value: String(i) }));
      await runtime.services.ingest.ingest(first, { takenAt: day('2024-01-01'), source: 'test' });
      const second = first.map((a, i) => article(a.id, `Article ${i} says another thing.`, { Value: String(i + 1) }));
      const file = join(dataDir, 'second.jsonl');
      writeFileSync(file, second.map((a) => JSON.stringify(a)).join('\n') + '\n');

      // Which launchers ran together, and whose children they were, says which start went wrong.
      let most: string[] = [];
      const counting = setInterval(() => {
        const now = launchersOf(dataDir);
        if (now.length > most.length) most = now;
      }, 100);
      try {
        const killed = (JSON.parse(readFileSync(join(dataDir, 'neo4j', 'launcher.json'), 'utf8')) as { pid: number }).pid;
        process.kill(killed, 'SIGKILL');
        // At once: what `chronoql ingest` starts with (finding or starting the directory's Neo4j), and a real CLI ingest.
        const cliStart = startManagedNeo4j({ dataDir, heapMb: 512, environment: process.env });
        const cli = runChronoql(['ingest', file, '--taken-at', '2024-02-01'], { ...env, NEO4J_URI: '' });
        const backAfterMs = await untilAnswered(server.url);
        // How soon is a speed, not a behaviour (68.7 s on a loaded CI machine): the bug this guards against was a
        // 17-minute outage, which untilAnswered's two-minute bound still catches.
        t.diagnostic(`the server answered again ${(backAfterMs / 1000).toFixed(1)} s after the kill`);
        const other = await cliStart;
        assert.equal(other.uri, runtime.neo4j.uri, "the CLI's start uses the Neo4j the server's drivers point at");
        const { code, output } = await cli.finished;
        assert.equal(code, 0, output);
        assert.equal(most.length, 1, `Neo4j JVMs on the data directory at once: ${most.join(', ')} (this test is ${process.pid})`);

        // Whichever process runs it, the others use it: when that one stops, another takes over.
        await other.stop();
        await untilAnswered(server.url);
        assert.equal(most.length, 1, `Neo4j JVMs on the data directory at once: ${most.join(', ')}`);
      } finally {
        clearInterval(counting);
        t.diagnostic(
          lines
            .filter((line) => /managed Neo4j|store/.test(line))
            .map((line) => (JSON.parse(line) as { msg: string }).msg)
            .join('\n'),
        );
      }
      const { body } = await postGraphql(server.url, '{ snapshots { id status } fact(subject: "r5", attribute: "Value") { value } }');
      assert.deepEqual(body.data.snapshots, [
        { id: '2024-01-01', status: 'COMPLETE' },
        { id: '2024-02-01', status: 'COMPLETE' },
      ]);
      assert.equal(body.data.fact.value, '6');
      await assertLikeCleanRunOnSameStore(runtime, first, second);
    });
  });
});
