// Whether a GPU index's search runs on the GPU or on the CPU: the decision alone, which needs no
// GPU (test/unit/native-gpu.test.ts checks it end to end on one).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { placeSearch } from '../../src/native/placement.js';

const MiB = 2 ** 20;

describe('GPU or CPU for a search', () => {
  it('stays on the GPU while the rows fit its free memory, counting what the index already holds', () => {
    assert.deepEqual(placeSearch({ requiredBytes: 100 * MiB, heldBytes: 0, freeBytes: 100 * MiB }), { onDevice: true });
    // Growing from 80 to 120 MiB with 50 MiB free: the 80 held are reused.
    assert.deepEqual(placeSearch({ requiredBytes: 120 * MiB, heldBytes: 80 * MiB, freeBytes: 50 * MiB }), { onDevice: true });
    assert.deepEqual(placeSearch({ requiredBytes: 64 * MiB, heldBytes: 0, freeBytes: 80 * MiB, capBytes: 64 * MiB }), { onDevice: true });
  });

  it('moves to the CPU when the rows need more than is free, and says how much', () => {
    const placement = placeSearch({ requiredBytes: 7_900 * MiB, heldBytes: 1_000 * MiB, freeBytes: 5_000 * MiB });
    assert.equal(placement.onDevice, false);
    assert.equal(!placement.onDevice && placement.reason, 'the index needs 7900.0 MiB of GPU memory and only 6000.0 MiB is free for it');
  });

  it('moves to the CPU when the rows need more than the configured cap, even with memory free', () => {
    const placement = placeSearch({ requiredBytes: 65 * MiB, heldBytes: 60 * MiB, freeBytes: 70_000 * MiB, capBytes: 64 * MiB });
    assert.equal(placement.onDevice, false);
    assert.equal(!placement.onDevice && placement.reason, 'the index needs 65.0 MiB of GPU memory, more than the 64.0 MiB CHRONOQL_DEVICE_MEMORY_MB allows it');
  });
});
