// A data directory on a full disk (issue 21, case 5), on a real small filesystem: a tmpfs this
// test mounts (it needs root, or CAP_SYS_ADMIN; without it the tests are skipped and say so).
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, statfsSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Database } from '../../src/graph/database.js';
import { startManagedNeo4j } from '../../src/neo4jProcess/managedNeo4j.js';
import { projectRoot } from '../../src/platform/paths.js';
import { article, freePort, isAlive, openTestRuntime, runChronoql, testDataDir } from '../support/runtime.js';
import { assertLikeCleanRunOnSameStore } from '../support/storeChecks.js';

const mountPoint = mkdtempSync(join(tmpdir(), 'chronoql-full-'));
const mounted = ((): string | null => {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=192m', 'tmpfs', mountPoint], { stdio: 'pipe' });
    return null;
  } catch (error) {
    return `cannot mount a tmpfs here (${String((error as { stderr?: Buffer }).stderr ?? error).trim()})`;
  }
})();

/** Writes until the filesystem refuses: ENOSPC for every later write, the JVM's included. */
function fillDisk(): void {
  // Never the disk under it: only a filesystem of the size mounted here is filled.
  const { blocks, bsize } = statfsSync(mountPoint);
  assert.ok(blocks * bsize <= 192 * 1024 * 1024, `${mountPoint} is the small tmpfs this test mounted`);
  const fd = openSync(join(mountPoint, 'filler'), 'w');
  try {
    for (const size of [1 << 20, 4096, 1]) {
      const chunk = Buffer.alloc(size, 1);
      try {
        for (;;) writeSync(fd, chunk);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
      }
    }
  } finally {
    closeSync(fd);
  }
}

const freeDisk = (): void => rmSync(join(mountPoint, 'filler'), { force: true });

async function until(condition: () => boolean | Promise<boolean>, timeoutMs: number): Promise<boolean> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 250))) {
    if (await condition()) return true;
  }
  return condition();
}

const jvmPid = (dataDir: string): number => (JSON.parse(readFileSync(join(dataDir, 'neo4j', 'launcher.json'), 'utf8')) as { pid: number }).pid;
const boltUri = (dataDir: string): string =>
  `bolt://127.0.0.1:${(JSON.parse(readFileSync(join(dataDir, 'neo4j', 'launcher.json'), 'utf8')) as { boltPort: number }).boltPort}`;

describe('a full disk under the data directory', { skip: mounted ?? false }, () => {
  after(() => {
    if (!mounted) execFileSync('umount', ['-l', mountPoint]);
    rmSync(mountPoint, { recursive: true, force: true });
  });

  describe('while serving', () => {
    const dataDir = join(mountPoint, 'serve');
    const scratch = mkdtempSync(join(tmpdir(), 'chronoql-full-input-'));
    const first = Array.from({ length: 40 }, (_, i) => article(`d${i}`, `Article ${i} says one thing.`, { Value: String(i) }));
    const second = first.map((a, i) => article(a.id, `Article ${i} says another thing.`, { Value: String(i + 1) }));
    const files = { first: join(scratch, 'first.jsonl'), second: join(scratch, 'second.jsonl') };
    const env = {
      CHRONOQL_DATA_DIR: dataDir,
      CHRONOQL_MODELS_DIR: join(testDataDir, 'models'),
      CHRONOQL_NEO4J_HEAP_MB: '512',
      CHRONOQL_MIN_FREE_DISK_MB: '16',
      // The test's own Neo4j is not this store's.
      NEO4J_URI: '',
    };
    let serve: ReturnType<typeof runChronoql>;
    let url = '';
    const health = async (): Promise<{ status: number; body: Record<string, any> } | null> => {
      const response = await fetch(`${url}/health`).catch(() => null);
      return response && { status: response.status, body: (await response.json()) as Record<string, any> };
    };

    before(async () => {
      mkdirSync(dataDir, { recursive: true });
      writeFileSync(files.first, first.map((a) => JSON.stringify(a)).join('\n') + '\n');
      writeFileSync(files.second, second.map((a) => JSON.stringify(a)).join('\n') + '\n');
      const port = await freePort();
      url = `http://127.0.0.1:${port}`;
      serve = runChronoql(['serve'], { ...env, PORT: String(port) });
      assert.ok(await until(async () => (await health())?.status === 200, 180_000), 'the server came up');
    });
    after(async () => {
      serve.child.kill('SIGTERM');
      await serve.finished;
      rmSync(scratch, { recursive: true, force: true });
    });

    it(
      'refuses ingests below the margin with STORAGE_FULL, survives writes that meet ENOSPC, and a retried ingest gives the uninterrupted graph',
      { timeout: 600_000 },
      async (t) => {
        const ingest = (file: string, takenAt: string, extra: Record<string, string> = {}) =>
          runChronoql(['ingest', file, '--taken-at', takenAt], { ...env, ...extra }).finished;
        const firstRun = await ingest(files.first, '2024-01-01');
        assert.equal(firstRun.code, 0, firstRun.output);

        fillDisk();
        try {
          const degraded = await health();
          assert.equal(degraded?.status, 200);
          assert.equal(degraded?.body.status, 'degraded', JSON.stringify(degraded?.body));
          assert.match(
            degraded?.body.disk?.problem ?? '',
            /^only 0\.0 MiB are free on the data directory's filesystem, below the 16\.0 MiB an ingest keeps free/,
          );

          const refused = await ingest(files.second, '2024-02-01');
          assert.equal(refused.code, 1);
          assert.match(refused.output, /chronoql: only 0\.0 MiB are free on the data directory's filesystem, below the 16\.0 MiB .*\(nothing written\)/);

          // With no margin the writes reach Neo4j and meet ENOSPC; the server that runs it must not die of it.
          const failed = await ingest(files.second, '2024-02-01', { CHRONOQL_MIN_FREE_DISK_MB: '0' });
          assert.notEqual(failed.code, 0, failed.output);
          t.diagnostic(`the ingest on a full disk failed with: ${failed.output.split('\n').find((line) => line.startsWith('chronoql:'))}`);
          await new Promise((resolve) => setTimeout(resolve, 3_000));
          assert.equal(serve.child.exitCode, null, 'the server still runs');
          assert.ok((await health()) !== null, 'and answers');
        } finally {
          freeDisk();
        }
        // A Neo4j whose log append failed refuses writes until restarted: its launcher exits and the server restarts it.
        const freed = Date.now();
        assert.ok(await until(async () => (await health())?.status === 200, 150_000), 'Neo4j is back once there is room');
        t.diagnostic(`the server's Neo4j answered ${((Date.now() - freed) / 1000).toFixed(1)} s after space was freed`);
        assert.equal((await health())?.body.disk?.problem, null);
        const retried = await ingest(files.second, '2024-02-01');
        assert.equal(retried.code, 0, retried.output);

        // The uninterrupted run empties this same store and feeds it both snapshots: no third JVM to start, and
        // nothing shared with the other files (run-tests runs this one beside them).
        const reference = await openTestRuntime({
          env: { ...env, NEO4J_URI: boltUri(dataDir), NEO4J_USER: 'neo4j', NEO4J_PASSWORD: '' },
        });
        try {
          await assertLikeCleanRunOnSameStore(reference, first, second);
        } finally {
          await reference.close();
        }
      },
    );
  });

  describe('when the process that runs Neo4j dies', () => {
    // A process of its own that starts the managed Neo4j, writes (so the store has pages to flush), and dies as told.
    const owner = `
      const [, modulePath, dataDir] = process.argv;
      const { startManagedNeo4j } = await import(modulePath);
      const { default: neo4j } = await import('neo4j-driver');
      const connection = await startManagedNeo4j({ dataDir, heapMb: 512, environment: process.env });
      const driver = neo4j.driver(connection.uri, neo4j.auth.basic('neo4j', ''));
      await driver.executeQuery('UNWIND range(1, 20000) AS i CREATE (:Filler {i: i, text: "text that fills store pages " + i})');
      await driver.close();
      process.stdout.write('STARTED\\n');
      process.stdin.once('data', () => { throw new Error('the owner dies of an uncaught error'); });
      setInterval(() => {}, 1000);
    `;
    for (const death of ['an uncaught error', 'SIGTERM'] as const) {
      it(`of ${death} on a full disk, leaves no JVM behind, and the store starts again once there is room`, { timeout: 300_000 }, async (t) => {
        const dataDir = join(mountPoint, death === 'SIGTERM' ? 'sigterm' : 'uncaught');
        const child = spawn(
          process.execPath,
          ['--input-type=module', '-e', owner, join(projectRoot(), 'dist', 'src', 'neo4jProcess', 'managedNeo4j.js'), dataDir],
          {
            cwd: projectRoot(),
            stdio: ['pipe', 'pipe', 'inherit'],
          },
        );
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        await new Promise<void>((resolve, reject) => {
          child.stdout.on('data', (chunk: Buffer) => String(chunk).includes('STARTED') && resolve());
          child.once('exit', (code) => reject(new Error(`the owner exited early (code ${code})`)));
        });
        const pid = jvmPid(dataDir);
        fillDisk();
        try {
          if (death === 'SIGTERM') child.kill('SIGTERM');
          else child.stdin.write('die\n');
          await exited;
          const diedAt = Date.now();
          assert.ok(await until(() => !isAlive(pid), 75_000), `the JVM (pid ${pid}) is gone within 75 s of its owner`);
          t.diagnostic(`the JVM was gone ${((Date.now() - diedAt) / 1000).toFixed(1)} s after its owner died`);
          // No JVM is spawned to hang in recovery: the start is refused, saying why.
          await assert.rejects(
            startManagedNeo4j({ dataDir, heapMb: 512, environment: process.env }),
            /^ManagedNeo4jError: Not starting the managed Neo4j: only 0\.0 MiB are free on the filesystem of .*, and opening its store needs at least 16\.0 MiB/,
          );
        } finally {
          if (isAlive(pid)) process.kill(pid, 'SIGKILL');
          freeDisk();
        }
        const again = await startManagedNeo4j({ dataDir, heapMb: 512, environment: process.env });
        const db = Database.connect(again.uri, again.user, again.password);
        try {
          assert.deepEqual(await db.run('MATCH (f:Filler) RETURN count(f) AS n'), [{ n: 20_000 }]);
        } finally {
          await db.close();
          await again.stop();
        }
      });
    }
  });
});
