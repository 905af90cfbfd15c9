// Saving the native vector index when the disk is full (issue 21, case 5): a failed save once
// left an empty generation directory behind and was retried at every 2-second sync (26 of them).
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it, mock } from 'node:test';
import { RetrievalRepository } from '../../src/graph/retrievalRepository.js';
import { VectorIndex } from '../../src/native/index.js';
import { UnitVectorIndex } from '../../src/retrieval/unitIndex.js';

/** A store of `rows` embedded passages, answered without a database: the repository's Cypher runner is the fake. */
function storeOf(rows: number): RetrievalRepository {
  const units = Array.from({ length: rows }, (_, i) => ({
    rowId: i + 1,
    embedding: [1, i + 1, 0, 0],
    validFrom: new Date('2024-01-01T00:00:00Z'),
    validTo: null,
  }));
  return new RetrievalRepository({ run: async (cypher: string) => (/MATCH \(u:Passage\) WHERE u\.rowId >/.test(cypher) ? units : []) as never[] });
}

describe('native index saves on a full disk', () => {
  const directory = mkdtempSync(join(tmpdir(), 'chronoql-index-save-'));
  after(() => rmSync(directory, { recursive: true, force: true }));

  it('removes what a failed save wrote and backs off exponentially before the next, then saves once there is room', async () => {
    const index = await UnitVectorIndex.open({ label: 'Passage', embedderId: 'test', dimension: 4, directory, repository: storeOf(3), storeId: 'store' });
    await index.sync({ now: new Date(), storeId: 'store', embedderId: 'test' });

    let now = Date.now();
    mock.method(Date, 'now', () => now);
    // What a full disk does to the native save: a torn file, then ENOSPC.
    const full = mock.method(VectorIndex.prototype, 'save', async (path: string) => {
      writeFileSync(path, 'torn');
      throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    });
    const generations = (): string[] => readdirSync(directory).filter((entry) => entry !== 'passage.json');

    await assert.rejects(index.save(), /saving the Passage index failed \(ENOSPC: no space left on device, write\); the next try is in 2 s/);
    assert.deepEqual(generations(), [], 'the failed save left nothing behind');
    await index.save(); // within the backoff: not tried
    assert.equal(full.mock.callCount(), 1);

    now += 2_000;
    await assert.rejects(index.save(), /the next try is in 4 s/);
    now += 3_999;
    await index.save();
    assert.equal(full.mock.callCount(), 2);
    now += 1;
    await assert.rejects(index.save(), /the next try is in 8 s/);
    for (let failures = 3; failures < 12; failures += 1) {
      now += 60 * 60_000;
      await index.save().catch(() => {});
    }
    now += 60 * 60_000;
    await assert.rejects(index.save(), /the next try is in 600 s/, 'capped at ten minutes');
    assert.deepEqual(generations(), []);

    full.mock.restore();
    now += 600_000;
    await index.save();
    const saved = generations();
    assert.equal(saved.length, 1, 'one generation, the one the sidecar names');
    index.close();
    const reopened = await UnitVectorIndex.open({ label: 'Passage', embedderId: 'test', dimension: 4, directory, repository: storeOf(3), storeId: 'store' });
    assert.equal(reopened.size, 3);
    reopened.close();
    mock.restoreAll();
  });
});
