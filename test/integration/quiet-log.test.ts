// An idle server's log says nothing at info: routine index syncs that change nothing are debug
// lines, and the closures a sync re-reads in its overlap window are not applied (or counted) again.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/app/config.js';
import { openRuntime, type Runtime } from '../../src/app/runtime.js';
import { createLogger } from '../../src/platform/logger.js';
import { article, day, resetKnowledge, testDataDir } from '../support/runtime.js';

describe('quiet logs', () => {
  const lines: Array<{ level: number; msg: string; closed?: number }> = [];
  let runtime: Runtime;

  before(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    runtime = await openRuntime(loadConfig({ ...process.env, CHRONOQL_DATA_DIR: testDataDir }), createLogger('debug', sink));
    await resetKnowledge(runtime);
    const { ingest, retrieval } = runtime.services;
    await ingest.ingest([article('Quiet', 'The mayor is Anna Berg.\n\nThe river is long.')], { takenAt: day('2024-01-01'), source: 'test' });
    await retrieval.catchUp();
    // Closes versions now, so the syncs below still re-read these closures in their 30 s overlap window.
    await ingest.ingest([article('Quiet', 'The mayor is Jonas Lind.\n\nThe river is long.')], { takenAt: day('2024-06-01'), source: 'test' });
    await retrieval.catchUp();
  });
  after(async () => {
    await runtime.close();
  });

  it('writes no info line while nothing changes, though every sync re-reads the latest closures', async () => {
    lines.length = 0;
    runtime.keepIndexesFresh(100);
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const syncs = lines.filter((line) => line.msg === 'vector indexes synced');
    assert.ok(syncs.length >= 5, `${syncs.length} syncs in 3 s`);
    assert.deepEqual(
      lines.filter((line) => line.level >= 30),
      [],
      'nothing at info or above',
    );
    assert.ok(syncs.every((line) => line.closed === 0));
  });
});
