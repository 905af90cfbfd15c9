// Ingests refused before anything is written when the data directory's disk is nearly full (issue 21, case 5).
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { describe, it } from 'node:test';
import { GraphQLError } from 'graphql';
import { errorFormatter } from '../../src/api/errorReporting.js';
import { DiskSpace, StorageFullError } from '../../src/platform/diskSpace.js';

describe('free space on the data directory', () => {
  it('is read from the filesystem, and a margin above it refuses with STORAGE_FULL, as the API reports it', async () => {
    const free = await new DiskSpace(tmpdir(), 0).freeBytes();
    assert.ok(free > 0);
    const roomy = new DiskSpace(tmpdir(), 1);
    await roomy.ensureRoom();
    const status = await roomy.status();
    assert.deepEqual([status.minFreeBytes, status.problem, status.freeBytes > 0], [1, null, true]);

    const tight = new DiskSpace(tmpdir(), free * 4);
    const refusal = await tight.ensureRoom().then(
      () => null,
      (error: unknown) => error,
    );
    assert.ok(refusal instanceof StorageFullError);
    assert.match(
      refusal.message,
      /^only [\d.]+ MiB are free on the data directory's filesystem, below the [\d.]+ MiB an ingest keeps free \(CHRONOQL_MIN_FREE_DISK_MB\); free some space and retry \(nothing written\)$/,
    );
    assert.match((await tight.status()).problem ?? '', /MiB are free on the data directory's filesystem/);

    // As a resolver's error reaches the formatter: with its path and the original error.
    const error = new GraphQLError(refusal.message, { originalError: refusal, path: ['ingestSnapshot'] });
    const formatted = errorFormatter('production')(error.toJSON(), error);
    assert.equal(formatted.extensions?.code, 'STORAGE_FULL');
    assert.equal(formatted.message, refusal.message);
  });
});
