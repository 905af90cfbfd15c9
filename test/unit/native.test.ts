/**
 * CPU tests of the chronoql_native addon against the TypeScript reference
 * (eval/native/reference.ts): random and adversarial data, persistence,
 * argument checking and concurrency. Data is synthetic and seeded.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';

import { Classifier, Fusion, MAX_ID, MAX_K, OPEN_END, VectorIndex, backend } from '../../src/native/index.js';
import { loadAddon } from '../../src/native/loader.js';
import { ReferenceClassifier, ReferenceVectorIndex, referenceFusion, roundToHalf } from '../../eval/native/reference.js';
import { compareExactly, compareWithReference, randomMatrix, scatteredId, seededRandom, syntheticRows, tiedRows } from '../../eval/native/testing.js';
import type { Metric, QueryResult, SearchOptions, Storage, VectorIndexOptions } from '../../src/native/types.js';

// These tests exercise the CPU backend even when the CUDA build is present.
const device = 'cpu' as const;
const scratch = mkdtempSync(join(tmpdir(), 'chronoql-native-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

interface Pair {
  index: VectorIndex;
  reference: ReferenceVectorIndex;
}

async function buildPair(options: VectorIndexOptions, batches: Parameters<VectorIndex['addBatch']>[0][]): Promise<Pair> {
  const index = VectorIndex.create({ ...options, device });
  const reference = new ReferenceVectorIndex(options);
  for (const batch of batches) {
    await index.addBatch(batch);
    reference.addBatch(batch);
  }
  return { index, reference };
}

async function expectSameAsReference(pair: Pair, queries: Float32Array, k: number, options: SearchOptions, tolerance = 1e-5): Promise<void> {
  const actual = await pair.index.search(queries, k, options);
  const expected = pair.reference.search(queries, k, options);
  const problems = compareWithReference(actual, expected, pair.reference, pair.reference.prepareQueries(queries), options, tolerance);
  assert.deepEqual(problems, []);
}

function dayArray(random: () => number, count: number, days = 120): number[] {
  return Array.from({ length: count }, () => Math.floor(random() * days));
}

describe('native addon (CPU)', () => {
  test('reports its backend', () => {
    const info = backend();
    assert.ok(info.addonPath.endsWith('chronoql_native.node'));
    assert.ok(['cpu', 'cuda'].includes(info.backend));
    assert.ok(info.cpuThreads >= 1);
    assert.equal(info.maxK, 1024);
    const index = VectorIndex.create({ dimension: 4, device });
    assert.equal(index.backend, 'cpu');
  });

  for (const metric of ['cosine', 'ip'] as Metric[]) {
    for (const queryCount of [1, 3, 8, 21]) {
      test(`random data, ${metric}, Q=${queryCount} (both kernels)`, async () => {
        const random = seededRandom(1000 + queryCount);
        const d = 48;
        const pair = await buildPair({ dimension: d, metric }, [syntheticRows(random, 2500, d)]);
        const queries = randomMatrix(random, queryCount, d);
        await expectSameAsReference(pair, queries, 10, { asOf: dayArray(random, queryCount) });
      });
    }
  }

  test('multi-threaded scan over several chunks and a coalesced small append', async () => {
    const random = seededRandom(7);
    const d = 96;
    const batches = [
      syntheticRows(random, 30000, d, { firstId: 0 }),
      syntheticRows(random, 17, d, { firstId: 30000 }),
      syntheticRows(random, 3, d, { firstId: 30017 }),
      syntheticRows(random, 12000, d, { firstId: 30020 }),
    ];
    const pair = await buildPair({ dimension: d }, batches);
    assert.equal(pair.index.size, 42020);
    const queries = randomMatrix(random, 24, d);
    await expectSameAsReference(pair, queries, 12, { asOf: dayArray(random, 24) });
  });

  for (const d of [1, 3, 37]) {
    test(`dimension ${d} (not a multiple of 8)`, async () => {
      const random = seededRandom(d);
      const pair = await buildPair({ dimension: d, metric: 'ip' }, [syntheticRows(random, 900, d)]);
      for (const queryCount of [2, 5, 17]) {
        await expectSameAsReference(pair, randomMatrix(random, queryCount, d), 7, { asOf: dayArray(random, queryCount) });
      }
    });
  }

  test('exact ties are broken by the smaller id, identically to the reference', async () => {
    const random = seededRandom(99);
    const d = 12;
    const pair = await buildPair({ dimension: d, metric: 'ip' }, [tiedRows(random, d)]);
    for (const queryCount of [1, 4, 16]) {
      const queries = randomMatrix(random, queryCount, d, true);
      const options = { asOf: 0 };
      assert.deepEqual(compareExactly(await pair.index.search(queries, 25, options), pair.reference.search(queries, 25, options)), []);
    }
    const scalar = process.env.CHRONOQL_CPU_KERNEL;
    process.env.CHRONOQL_CPU_KERNEL = 'scalar';
    try {
      const queries = randomMatrix(random, 9, d, true);
      assert.deepEqual(compareExactly(await pair.index.search(queries, 25, { asOf: 0 }), pair.reference.search(queries, 25, { asOf: 0 })), []);
    } finally {
      if (scalar === undefined) delete process.env.CHRONOQL_CPU_KERNEL;
      else process.env.CHRONOQL_CPU_KERNEL = scalar;
    }
  });

  test('portable scalar kernel agrees with the reference', async () => {
    const random = seededRandom(5);
    const d = 29;
    const pair = await buildPair({ dimension: d, storage: 'fp16' }, [syntheticRows(random, 1500, d)]);
    const previous = process.env.CHRONOQL_CPU_KERNEL;
    process.env.CHRONOQL_CPU_KERNEL = 'scalar';
    try {
      await expectSameAsReference(pair, randomMatrix(random, 11, d), 9, { asOf: dayArray(random, 11) });
    } finally {
      if (previous === undefined) delete process.env.CHRONOQL_CPU_KERNEL;
      else process.env.CHRONOQL_CPU_KERNEL = previous;
    }
  });

  test('all rows filtered out by asOf gives empty results', async () => {
    const random = seededRandom(3);
    const rows = syntheticRows(random, 500, 16, { days: 50 });
    rows.validFrom.fill(100);
    rows.validTo.fill(OPEN_END);
    const pair = await buildPair({ dimension: 16 }, [rows]);
    for (const queryCount of [1, 9]) {
      const results = await pair.index.search(randomMatrix(random, queryCount, 16), 5, { asOf: 99 });
      assert.equal(results.length, queryCount);
      for (const r of results) assert.equal(r.ids.length, 0);
    }
    // Closed intervals are exclusive at validTo.
    const closed = await buildPair({ dimension: 2, metric: 'ip' }, [{ ids: [1], vectors: [[1, 0]], validFrom: 10, validTo: 20 }]);
    assert.deepEqual(Array.from((await closed.index.search([[1, 0]], 1, { asOf: 19 }))[0]!.ids), [1]);
    assert.equal((await closed.index.search([[1, 0]], 1, { asOf: 20 }))[0]!.ids.length, 0);
    assert.equal((await closed.index.search([[1, 0]], 1, { asOf: 9 }))[0]!.ids.length, 0);
  });

  test('k larger than the valid rows returns every valid row', async () => {
    const random = seededRandom(4);
    const pair = await buildPair({ dimension: 8 }, [syntheticRows(random, 60, 8)]);
    const queries = randomMatrix(random, 10, 8);
    const options = { asOf: dayArray(random, 10) };
    await expectSameAsReference(pair, queries, 1024, options);
    const results = await pair.index.search(queries, 1024, options);
    for (let q = 0; q < 10; q++) {
      const valid = Array.from({ length: 60 }, (_, i) => scatteredId(i)).filter((id) => pair.reference.isValidAt(id, options.asOf[q]!));
      assert.equal(results[q]!.ids.length, valid.length);
    }
  });

  test('close releases the index; later calls throw', async () => {
    const index = VectorIndex.create({ dimension: 3, device });
    await index.addBatch({ ids: [1], vectors: [[1, 2, 3]], validFrom: 0 });
    const pending = index.search([[1, 0, 0]], 1, { asOf: 0 });
    index.close();
    assert.deepEqual(Array.from((await pending)[0]!.ids), [1], 'a search issued before close completes');
    assert.throws(() => index.size, /closed/);
    assert.throws(() => index.search([[1, 0, 0]], 1, { asOf: 0 }), /closed/);
    index.close(); // idempotent
  });

  test('an empty index returns empty results', async () => {
    const index = VectorIndex.create({ dimension: 5, device });
    assert.equal(index.size, 0);
    const results = await index.search(
      [
        [1, 2, 3, 4, 5],
        [0, 0, 0, 0, 1],
      ],
      3,
      { asOf: [0, 1] },
    );
    assert.deepEqual(
      results.map((r) => r.ids.length),
      [0, 0],
    );
  });

  test('exclusions are never returned and the next rows move up', async () => {
    const random = seededRandom(11);
    const d = 32;
    const pair = await buildPair({ dimension: d, metric: 'ip' }, [syntheticRows(random, 3000, d)]);
    const queries = randomMatrix(random, 12, d);
    const asOf = dayArray(random, 12);
    const first = await pair.index.search(queries, 10, { asOf });
    // Exclude each query's first round (as adaptive re-retrieval does), plus
    // ids that do not exist and duplicates.
    const exclude = first.map((r, q) => (q % 3 === 0 ? null : [...Array.from(r.ids), 1, 1, 999999999, r.ids[0] ?? 0]));
    const options = { asOf, exclude };
    await expectSameAsReference(pair, queries, 10, options);
    const second = await pair.index.search(queries, 10, options);
    second.forEach((r, q) => {
      if (q % 3 === 0) return;
      for (const id of r.ids) assert.ok(!first[q]!.ids.includes(id), `query ${q} returned excluded id ${id}`);
    });
  });

  test('remove and invalidate match the reference', async () => {
    const random = seededRandom(12);
    const d = 20;
    const rows = syntheticRows(random, 2000, d);
    const pair = await buildPair({ dimension: d }, [rows]);
    const removed = Array.from(rows.ids).filter((_, i) => i % 5 === 0);
    assert.equal(await pair.index.remove([...removed, 424242]), removed.length);
    assert.equal(pair.reference.remove(removed), removed.length);
    assert.equal(await pair.index.remove(removed), 0, 'removing twice changes nothing');
    const endedAt = Array.from(rows.ids.keys()).filter((i) => i % 7 === 1);
    const ended = endedAt.map((i) => rows.ids[i]!);
    const endDays = endedAt.map((i) => Math.max(40, rows.validFrom[i]!));
    assert.equal(await pair.index.invalidate(ended, endDays), pair.reference.invalidate(ended, endDays));
    assert.equal(await pair.index.invalidate(ended, endDays), 0, 'closing again at the same time changes nothing');
    assert.equal(pair.reference.invalidate(ended, endDays), 0);
    // An end before a row's start is refused whole, by both.
    const startsLate = Array.from(rows.ids.keys()).find((i) => rows.validFrom[i]! > 10 && i % 5 !== 0)!;
    const before = [rows.ids[endedAt[0]!]!, rows.ids[startsLate]!];
    await assert.rejects(
      pair.index.invalidate(before, [endDays[0]!, rows.validFrom[startsLate]! - 1]),
      /validTo\[1\] \(\d+\) is before validFrom \(\d+\) of id \d+/,
    );
    assert.throws(() => pair.reference.invalidate(before, [endDays[0]!, rows.validFrom[startsLate]! - 1]), /validTo\[1\]/);
    assert.equal(pair.index.size, 2000 - removed.length);
    const queries = randomMatrix(random, 10, d);
    await expectSameAsReference(pair, queries, 15, { asOf: [0, 10, 20, 30, 39, 40, 41, 60, 90, 119] });
    // A removed id can be added again.
    const again = { ids: [removed[0]!], vectors: [Array.from({ length: d }, () => 1)], validFrom: 0 };
    await pair.index.addBatch(again);
    pair.reference.addBatch(again);
    await expectSameAsReference(pair, queries, 15, { asOf: 5 });
  });

  test('fp16 storage: matches the fp16 reference tightly and fp32 within half precision', async () => {
    const random = seededRandom(13);
    const d = 64;
    const rows = syntheticRows(random, 4000, d);
    const half = await buildPair({ dimension: d, storage: 'fp16' }, [rows]);
    const full = await buildPair({ dimension: d, storage: 'fp32' }, [rows]);
    const queries = randomMatrix(random, 16, d);
    const options = { asOf: dayArray(random, 16) };
    await expectSameAsReference(half, queries, 10, options);
    const a = await half.index.search(queries, 10, options);
    const b = await full.index.search(queries, 10, options);
    let overlap = 0;
    a.forEach((r, q) => {
      r.scores.forEach((s, i) => assert.ok(Math.abs(s - b[q]!.scores[i]!) < 2e-3, `query ${q} rank ${i}: fp16 ${s} vs fp32 ${b[q]!.scores[i]}`));
      overlap += Array.from(r.ids).filter((id) => b[q]!.ids.includes(id)).length;
    });
    assert.ok(overlap >= 0.9 * 160, `fp16 top-10 overlap with fp32 is ${overlap}/160`);
    assert.equal(roundToHalf(1 / 3), 0.333251953125);
  });

  test('memory stays within 5% of the raw matrix', async () => {
    const random = seededRandom(14);
    const d = 384;
    for (const storage of ['fp32', 'fp16'] as Storage[]) {
      const index = VectorIndex.create({ dimension: d, storage, device });
      for (let b = 0; b < 4; b++) await index.addBatch(syntheticRows(random, 5000, d, { firstId: b * 5000 }));
      const raw = 20000 * d * (storage === 'fp32' ? 4 : 2);
      assert.ok(index.memoryBytes >= raw, `${storage}: ${index.memoryBytes} < raw ${raw}`);
      assert.ok(index.memoryBytes <= raw * 1.05, `${storage}: ${index.memoryBytes} bytes is more than 5% over ${raw}`);
    }
  });

  test('save and load round trip', async () => {
    const random = seededRandom(15);
    const d = 40;
    for (const storage of ['fp32', 'fp16'] as Storage[]) {
      const rows = syntheticRows(random, 3000, d);
      const pair = await buildPair({ dimension: d, storage, metric: 'ip' }, [rows]);
      await pair.index.remove(Array.from(rows.ids.subarray(0, 100)));
      await pair.index.invalidate(Array.from(rows.ids.subarray(100, 200)), rows.validFrom.subarray(100, 200)); // emptied intervals survive a save
      const path = join(scratch, `index-${storage}.cqlv`);
      await pair.index.save(path);
      const loaded = await VectorIndex.load(path, { device });
      assert.equal(loaded.size, pair.index.size);
      assert.equal(loaded.dimension, d);
      assert.equal(loaded.storage, storage);
      assert.equal(loaded.metric, 'ip');
      const queries = randomMatrix(random, 9, d);
      const options = { asOf: dayArray(random, 9) };
      assert.deepEqual(compareExactly(await loaded.search(queries, 10, options), await pair.index.search(queries, 10, options)), []);
      // The loaded index keeps working: ids from the file are known.
      await assert.rejects(loaded.addBatch({ ids: [rows.ids[500]!], vectors: [new Array(d).fill(1)], validFrom: 0 }), /ids: id \d+ is already in the index/);
    }
    const path = join(scratch, 'index-fp32.cqlv');
    const bytes = readFileSync(path);
    writeFileSync(join(scratch, 'truncated.cqlv'), bytes.subarray(0, bytes.length - 10));
    await assert.rejects(VectorIndex.load(join(scratch, 'truncated.cqlv')), /truncated or corrupt/);
    const corrupt = Buffer.from(bytes);
    corrupt[60] = corrupt[60]! ^ 0xff;
    writeFileSync(join(scratch, 'corrupt.cqlv'), corrupt);
    await assert.rejects(VectorIndex.load(join(scratch, 'corrupt.cqlv')), /corrupt/);
    // Any single flipped byte, anywhere (header, metadata or vectors), is caught on load.
    const random2 = seededRandom(151);
    for (let trial = 0; trial < 300; trial++) {
      const damaged = Buffer.from(bytes);
      const at = Math.floor(random2() * damaged.length);
      damaged[at] = damaged[at]! ^ (1 + Math.floor(random2() * 255));
      writeFileSync(join(scratch, 'damaged.cqlv'), damaged);
      await assert.rejects(VectorIndex.load(join(scratch, 'damaged.cqlv')), /corrupt|not a ChronoQL index|format version|invalid header/, `byte ${at}`);
    }
    writeFileSync(join(scratch, 'other.cqlv'), 'not an index at all, just some text that is long enough to have a header');
    await assert.rejects(VectorIndex.load(join(scratch, 'other.cqlv')), /not a ChronoQL index file/);
    await assert.rejects(VectorIndex.load(join(scratch, 'missing.cqlv')), /cannot open index file/);
  });

  test('adaptive re-retrieval search blends the two queries in one scan', async () => {
    const random = seededRandom(16);
    const d = 24;
    const pair = await buildPair({ dimension: d }, [syntheticRows(random, 2000, d)]);
    const first = randomMatrix(random, 6, d);
    const second = randomMatrix(random, 6, d);
    const omega = [0, 0.25, 0.5, 0.75, 1, 0.1];
    const options = { asOf: 50, exclude: [[3, 10], null, [], [17], null, null] };
    const actual = await pair.index.searchArr(first, second, omega, 8, options);
    const expected = pair.reference.searchArr(first, second, omega, 8, options);
    const a = pair.reference.prepareQueries(first);
    const b = pair.reference.prepareQueries(second);
    actual.forEach((r, q) => {
      assert.deepEqual(Array.from(r.ids), Array.from(expected[q]!.ids));
      r.ids.forEach((id, i) => {
        // The score is exactly the ARR formula on the two cosine similarities.
        const fused = (1 - omega[q]!) * pair.reference.scoreOf(a, q, id) + omega[q]! * pair.reference.scoreOf(b, q, id);
        assert.ok(Math.abs(r.scores[i]! - fused) < 1e-5, `query ${q}: ${r.scores[i]} vs ${fused}`);
      });
    });
    // ω = 0 is the first query's plain search.
    const plain = await pair.index.search(first.subarray(0, d), 8, { asOf: 50, exclude: [[3, 10]] });
    assert.deepEqual(Array.from(actual[0]!.ids), Array.from(plain[0]!.ids));
  });

  test('concurrent searches give the same results as sequential ones, and calls keep issue order', async () => {
    const random = seededRandom(17);
    const d = 64;
    const index = VectorIndex.create({ dimension: d, device });
    await index.addBatch(syntheticRows(random, 20000, d));
    const batches = Array.from({ length: 24 }, (_, i) => ({ queries: randomMatrix(random, 1 + (i % 12), d), asOf: 30 + i }));
    const sequential: QueryResult[][] = [];
    for (const b of batches) sequential.push(await index.search(b.queries, 10, { asOf: b.asOf }));
    const concurrent = await Promise.all(batches.map((b) => index.search(b.queries, 10, { asOf: b.asOf })));
    concurrent.forEach((r, i) => assert.deepEqual(compareExactly(r, sequential[i]!), []));
    // Issued without awaiting: the search must see the add, the second search the removal.
    const probe = new Array(d).fill(0).map((_, i) => (i === 0 ? 1 : 0));
    const added = index.addBatch({ ids: [4000000000], vectors: [probe.map((v) => v * 1000)], validFrom: 0 });
    const seen = index.search([probe], 1, { asOf: 1 });
    const removed = index.remove([4000000000]);
    const gone = index.search([probe], 1, { asOf: 1 });
    await added;
    assert.equal((await seen)[0]!.ids[0], 4000000000);
    assert.equal(await removed, 1);
    assert.notEqual((await gone)[0]!.ids[0], 4000000000);
  });

  test('invalid arguments throw errors naming the argument', async () => {
    assert.throws(() => VectorIndex.create({ dimension: 0 }), /dimension/);
    assert.throws(() => VectorIndex.create({ dimension: 2.5 }), /dimension/);
    assert.throws(() => VectorIndex.create({ dimension: 4, storage: 'fp8' as Storage }), /storage/);
    assert.throws(() => VectorIndex.create({ dimension: 4, metric: 'l2' as Metric }), /metric/);
    assert.throws(() => VectorIndex.create({ dimension: 4, device: 'tpu' as 'cpu' }), /device/);
    const index = VectorIndex.create({ dimension: 4, device });
    await index.addBatch({
      ids: [1, 2],
      vectors: [
        [1, 0, 0, 0],
        [0, 1, 0, 0],
      ],
      validFrom: 0,
    });
    const asOf = { asOf: 1 };
    assert.throws(() => index.search(new Float64Array(4) as unknown as Float32Array, 1, asOf), /queries/);
    assert.throws(() => index.search(new Float32Array(6), 1, asOf), /queries/);
    assert.throws(() => index.search(new Float32Array(0), 1, asOf), /queries/);
    assert.throws(() => index.search([[1, 2, 3]], 1, asOf), /queries\[0\]/);
    assert.throws(() => index.search([[1, NaN, 0, 0]], 1, asOf), /queries.*NaN/);
    assert.throws(() => index.search([[0, 0, 0, 0]], 1, asOf), /queries.*zero norm/);
    assert.throws(() => index.search([[1, 0, 0, 0]], 0, asOf), /k must be/);
    assert.throws(() => index.search([[1, 0, 0, 0]], 1.5, asOf), /k must be/);
    assert.throws(() => index.search([[1, 0, 0, 0]], 1025, asOf), /k must be/);
    assert.throws(() => index.search([[1, 0, 0, 0]], '3' as unknown as number, asOf), /k must be a number/);
    assert.throws(() => index.search([[1, 0, 0, 0]], 1, { asOf: [1, 2] }), /asOf/);
    assert.throws(() => index.search([[1, 0, 0, 0]], 1, { asOf: 1.5 }), /asOf/);
    assert.throws(() => index.search([[1, 0, 0, 0]], 1, {} as SearchOptions), /asOf/);
    assert.throws(() => index.search([[1, 0, 0, 0]], 1, undefined as unknown as SearchOptions), /options/);
    assert.throws(() => index.search([[1, 0, 0, 0]], 1, { asOf: 1, exclude: [[1], [2]] }), /exclude/);
    assert.throws(() => index.search([[1, 0, 0, 0]], 1, { asOf: 1, exclude: [[-1]] }), /exclude\[0\]\[0\]/);
    assert.throws(() => index.searchArr([[1, 0, 0, 0]], [[0, 1, 0, 0]], 1.5, 1, asOf), /omega/);
    assert.throws(
      () =>
        index.searchArr(
          [[1, 0, 0, 0]],
          [
            [0, 1, 0, 0],
            [1, 1, 1, 1],
          ],
          0.5,
          1,
          asOf,
        ),
      /secondQueries/,
    );
    assert.throws(() => index.addBatch({ ids: [-1], vectors: [[1, 0, 0, 0]], validFrom: 0 }), /ids\[0\]/);
    assert.throws(() => index.addBatch({ ids: [4294967295], vectors: [[1, 0, 0, 0]], validFrom: 0 }), /ids\[0\]/);
    assert.throws(() => index.addBatch({ ids: Uint32Array.of(4294967295), vectors: [[1, 0, 0, 0]], validFrom: 0 }), /ids\[0\]/);
    assert.throws(
      () =>
        index.addBatch({
          ids: [3, 3],
          vectors: [
            [1, 0, 0, 0],
            [1, 0, 0, 0],
          ],
          validFrom: 0,
        }),
      /ids contains id 3 twice/,
    );
    assert.throws(() => index.addBatch({ ids: [3], vectors: new Float32Array(5), validFrom: 0 }), /vectors/);
    assert.throws(() => index.addBatch({ ids: [3, 4], vectors: new Float32Array(4), validFrom: 0 }), /vectors/);
    assert.throws(() => index.addBatch({ ids: [3], vectors: [[1, 0, 0, 0]], validFrom: 5, validTo: 5 }), /validTo/);
    assert.throws(() => index.addBatch({ ids: [3], vectors: [[1, 0, 0, 0]], validFrom: [1, 2] }), /validFrom/);
    assert.throws(() => index.addBatch({ ids: [3], vectors: [[1, 0, 0, 0]], validFrom: OPEN_END }), /validFrom/);
    await assert.rejects(index.addBatch({ ids: [3], vectors: Float32Array.of(1, NaN, 0, 0), validFrom: 0 }), /vectors: row 0 contains NaN/);
    await assert.rejects(index.addBatch({ ids: [3], vectors: new Float32Array(4), validFrom: 0 }), /vectors: row 0 has zero norm/);
    await assert.rejects(index.addBatch({ ids: [1], vectors: [[1, 1, 1, 1]], validFrom: 0 }), /ids: id 1 is already in the index/);
    assert.equal(index.size, 2, 'rejected batches add nothing');
    assert.throws(() => index.remove(['a'] as unknown as number[]), /ids\[0\]/);
    assert.throws(() => index.invalidate([1], [1, 2]), /validTo/);
    assert.throws(() => index.save(''), /path/);

    // The raw bindings check again, so calling them directly cannot crash the process.
    const { addon } = loadAddon();
    const raw = new addon.NativeVectorIndex(4, 'fp32', 'cosine', 'cpu');
    assert.throws(() => new addon.NativeVectorIndex(0, 'fp32', 'cosine', 'cpu'), /dimension/);
    assert.throws(() => new addon.NativeVectorIndex(4, 'fp64', 'cosine', 'cpu'), /storage/);
    assert.throws(() => raw.search(new Float32Array(3), 1, new Int32Array(1)), /queries/);
    assert.throws(() => raw.search(new Float32Array(4), 1, new Int32Array(2)), /asOf/);
    assert.throws(() => raw.search(new Float32Array(4), 5000, new Int32Array(1)), /k/);
    assert.throws(() => raw.search(new Float32Array(4), 1, new Int32Array(1), Uint32Array.of(0, 5), new Uint32Array(1)), /excludeOffsets/);
    assert.throws(() => raw.search(new Float32Array(4), 1, new Int32Array(1), Uint32Array.of(1, 0), new Uint32Array(0)), /excludeOffsets/);
    assert.throws(() => raw.addBatch(new Uint32Array(2), new Float32Array(4), new Int32Array(2), new Int32Array(2)), /vectors/);
    assert.throws(() => raw.addBatch(new Uint32Array(1), new Float32Array(4), new Int32Array(2), new Int32Array(1)), /validFrom/);
    assert.throws(() => raw.addBatch([1] as unknown as Uint32Array, new Float32Array(4), new Int32Array(1), new Int32Array(1)), /ids/);
    assert.throws(() => raw.invalidate(new Uint32Array(2), new Int32Array(1)), /validTo/);
    assert.throws(() => (raw.save as (p?: unknown) => Promise<void>)(42), /path/);
    assert.throws(() => addon.rrf(Uint32Array.of(0, 3), new Uint32Array(2), 60), /offsets/);
    assert.throws(() => addon.fuseArr(new Float32Array(4), new Float32Array(3), new Float32Array(1)), /second/);
    assert.throws(
      () =>
        new addon.NativeClassifier(
          2,
          new Float32Array(2),
          new Float32Array(2),
          Uint32Array.of(2, 2),
          new Float32Array(3),
          new Float32Array(2),
          Uint8Array.of(0),
        ),
      /weights/,
    );
  });

  const model = {
    type: 'mlp' as const,
    classes: ['reliable', 'misleading', 'uncertain'],
    features: ['similarity', 'age_days', 'changed'],
    normalization: { mean: [0.5, 100, 0.2], std: [0.25, 80, 0.4] },
    layers: [
      {
        weights: [
          [1.2, -0.4, 0.3],
          [-0.7, 0.9, 1.1],
          [0.2, 0.1, -1.3],
          [0.5, 0.5, 0.5],
        ],
        bias: [0.1, -0.2, 0.05, 0],
        activation: 'relu' as const,
      },
      {
        weights: [
          [1, -1, 0.5, 0.2],
          [-0.3, 0.8, -0.6, 0.1],
          [0.4, 0.2, 0.9, -0.5],
        ],
        bias: [0, 0.1, -0.1],
      },
    ],
  };

  test('3,000 random calls with hostile shapes and values never crash, and the index stays equal to the reference', async (t) => {
    const random = seededRandom(911);
    const d = 8;
    const pick = <T>(options: readonly T[]): T => options[Math.floor(random() * options.length)]!;
    const numbers = (n: number): number[] => Array.from({ length: n }, () => pick([random(), -random(), NaN, Infinity, -Infinity, 0, 1e300, -1e-300]));
    const junk = (): unknown =>
      pick([
        () => undefined,
        () => null,
        () => pick([NaN, Infinity, -Infinity, -1, 0, 2 ** 31, 2 ** 32, -(2 ** 31) - 1, 1e300, 0.5, MAX_ID + 1]),
        () => 'not a number',
        () => ({}),
        () => [],
        () => numbers(Math.floor(random() * 3 * d)),
        () => new Float32Array(Math.floor(random() * 3 * d)).map(() => (random() - 0.5) * 10),
        () => new Int32Array(Math.floor(random() * 5)).map(() => Math.floor((random() - 0.5) * 2 ** 32)),
        () => new Uint32Array(Math.floor(random() * 5)).map(() => Math.floor(random() * 2 ** 32)),
        () => [numbers(d), numbers(d + 1)],
        () => Array.from({ length: Math.floor(random() * 4) }, () => numbers(d)),
      ])();
    const pair = await buildPair({ dimension: d }, [syntheticRows(random, 200, d)]);
    const classifier = Classifier.fromJson({
      type: 'linear',
      classes: ['no', 'yes'],
      features: ['a', 'b'],
      layers: [
        {
          weights: [
            [1, 0],
            [0, 1],
          ],
          bias: [0, 0],
        },
      ],
    });
    let nextId = 10_000;
    const outcomes = { resolved: 0, rejected: 0 };
    for (let call = 0; call < 3_000; call++) {
      const valid = random() < 0.3;
      const kind = pick(['add', 'search', 'searchArr', 'remove', 'invalidate', 'classify', 'rrf', 'arr'] as const);
      let attempt: () => Promise<unknown>;
      let mirror: (() => unknown) | undefined;
      switch (kind) {
        case 'add': {
          const count = 1 + Math.floor(random() * 3);
          const input = valid
            ? {
                ids: Array.from({ length: count }, () => nextId++),
                vectors: randomMatrix(random, count, d),
                validFrom: Math.floor(random() * 50),
                validTo: pick([null, 60, 200]),
              }
            : { ids: pick([junk(), [nextId++]]), vectors: junk(), validFrom: pick([junk(), 3]), validTo: junk() };
          attempt = () => pair.index.addBatch(input as never);
          mirror = () => pair.reference.addBatch(input as never);
          break;
        }
        case 'search':
          attempt = () =>
            pair.index.search((valid ? randomMatrix(random, 2, d) : junk()) as never, (valid ? 5 : pick([junk(), MAX_K + 1, 0, -3])) as never, {
              asOf: (valid ? 30 : junk()) as never,
              exclude: (valid ? undefined : junk()) as never,
            });
          break;
        case 'searchArr':
          attempt = () =>
            pair.index.searchArr(junk() as never, junk() as never, junk() as never, pick([5, junk()]) as never, { asOf: pick([30, junk()]) as never });
          break;
        case 'remove': {
          const ids = valid ? [Math.floor(random() * 300)] : junk();
          attempt = () => pair.index.remove(ids as never);
          mirror = () => pair.reference.remove(ids as never);
          break;
        }
        case 'invalidate': {
          const ids = valid ? [scatteredId(Math.floor(random() * 200))] : junk();
          const validTo = valid ? 100 + Math.floor(random() * 50) : junk();
          attempt = () => pair.index.invalidate(ids as never, validTo as never);
          mirror = () => pair.reference.invalidate(ids as never, validTo as never);
          break;
        }
        case 'classify':
          attempt = () => classifier.scoreBatch(junk() as never);
          break;
        case 'rrf':
          attempt = () => Fusion.rrf(junk() as never, { k: junk() as never, weights: junk() as never });
          break;
        case 'arr':
          attempt = () => Fusion.arr(junk() as never, junk() as never, junk() as never);
          break;
      }
      // A synchronous throw and a rejection are both fine; what matters is that the process lives
      // and that every change the addon accepted, the reference accepts too.
      const accepted = await Promise.resolve()
        .then(attempt)
        .then(
          () => true,
          (error: unknown) => {
            assert.ok(error instanceof Error, `${kind} threw a non-Error: ${String(error)}`);
            return false;
          },
        );
      outcomes[accepted ? 'resolved' : 'rejected'] += 1;
      if (accepted && mirror) assert.doesNotThrow(mirror, `${kind}: the addon accepted what the reference refuses`);
    }
    assert.ok(outcomes.resolved > 300 && outcomes.rejected > 1_000, JSON.stringify(outcomes));
    assert.ok(pair.index.size > 250, `valid adds went in (${pair.index.size} rows)`);
    t.diagnostic(`${outcomes.resolved} calls resolved, ${outcomes.rejected} refused; ${pair.index.size} rows`);
    const queries = randomMatrix(random, 6, d);
    await expectSameAsReference(pair, queries, 20, { asOf: [0, 10, 30, 60, 120, 300] });
  });

  test('classifier matches the reference (MLP and linear)', async () => {
    const random = seededRandom(18);
    const features = Array.from({ length: 700 }, () => [random(), random() * 300, random() < 0.3 ? 1 : 0]);
    const native = Classifier.fromJson(JSON.stringify(model));
    const reference = ReferenceClassifier.fromJson(model);
    const a = await native.scoreBatch(features);
    const b = reference.scoreBatch(features);
    assert.equal(a.length, 700 * 3);
    a.forEach((p, i) => assert.ok(Math.abs(p - b[i]!) < 1e-6, `probability ${i}: ${p} vs ${b[i]}`));
    for (let r = 0; r < 700; r++) assert.ok(Math.abs(a[r * 3]! + a[r * 3 + 1]! + a[r * 3 + 2]! - 1) < 1e-5);
    const records = await native.scoreRecords([{ similarity: 0.9, age_days: 3, changed: 0 }]);
    assert.deepEqual(Object.keys(records[0]!), model.classes);
    const linear = { type: 'linear' as const, classes: ['no', 'yes'], features: ['x'], layers: [{ weights: [[0], [2]], bias: [0, 0] }] };
    const p = await Classifier.fromJson(linear).scoreBatch([[0], [1]]);
    assert.ok(Math.abs(p[0]! - 0.5) < 1e-7);
    assert.ok(Math.abs(p[3]! - Math.exp(2) / (1 + Math.exp(2))) < 1e-6);
  });

  test('classifier rejects bad models and inputs, naming the field', async () => {
    assert.throws(() => Classifier.fromJson('{not json'), /model is not valid JSON/);
    assert.throws(() => Classifier.fromJson({ ...model, classes: ['only'] }), /model.classes/);
    assert.throws(() => Classifier.fromJson({ ...model, features: ['a', 'a', 'b'] }), /model.features\[1\]/);
    assert.throws(() => Classifier.fromJson({ ...model, normalization: { mean: [0, 0, 0], std: [1, 0, 1] } }), /model.normalization.std\[1\]/);
    assert.throws(
      () => Classifier.fromJson({ ...model, layers: [{ ...model.layers[0]!, weights: [[1, 2]] }, model.layers[1]!] }),
      /model.layers\[0\].weights\[0\]/,
    );
    assert.throws(() => Classifier.fromJson({ ...model, layers: [model.layers[0]!] }), /model.layers\[0\].activation/);
    assert.throws(() => Classifier.fromJson({ ...model, type: 'linear' }), /model.layers/);
    const native = Classifier.fromJson(model);
    assert.throws(() => native.scoreBatch([{ similarity: 1, age_days: 2 }]), /features\[0\].changed/);
    assert.throws(() => native.scoreBatch([[1, 2, NaN]]), /features\[0\]\[2\]/);
    assert.throws(() => native.scoreBatch(new Float32Array(4)), /features/);
  });

  test('fusion matches the reference', async () => {
    const random = seededRandom(19);
    const first = Array.from({ length: 40 }, () => random());
    const second = Array.from({ length: 40 }, () => random());
    const omega = [0, 0.3, 0.9, 1];
    assert.deepEqual(Array.from(await Fusion.arr(first, second, omega)), Array.from(referenceFusion.arr(first, second, omega)));
    const fused = await Fusion.arr([0.2, 0.4], [1, 0], 0.5);
    assert.ok(Math.abs(fused[0]! - 0.6) < 1e-7 && Math.abs(fused[1]! - 0.2) < 1e-7);

    const lists = {
      dense: { ids: ['p3', 'p1', 'p7', 'p2'], scores: [0.91, 0.85, 0.85, 0.2] },
      lexical: { ids: ['p1', 'p9', 'p3'], scores: [12.5, 9.1, 3] },
      flat: { ids: ['p4', 'p5'], scores: [2, 2] },
      empty: { ids: [], scores: [] },
    };
    const weights = { dense: 0.6, lexical: 0.3, flat: 0.1, empty: 1 };
    assert.deepEqual(await Fusion.weightedSum(lists, weights), referenceFusion.weightedSum(lists, weights));
    const numeric = { a: { ids: [5, 3, 9], scores: [3, 2, 1] }, b: { ids: [9, 5], scores: [1, 1] } };
    const numericResult = await Fusion.weightedSum(numeric, { a: 1, b: 1 });
    assert.deepEqual(numericResult, referenceFusion.weightedSum(numeric, { a: 1, b: 1 }));
    assert.deepEqual(
      numericResult.map((r) => r.id),
      [5, 9, 3],
    );

    const ranked = [
      ['d1', 'd2', 'd3', 'd4'],
      ['d3', 'd1', 'd5'],
      ['d6', 'd3'],
    ];
    assert.deepEqual(await Fusion.rrf(ranked), referenceFusion.rrf(ranked));
    assert.deepEqual(await Fusion.rrf(ranked, { k: 0, weights: [1, 2, 0.5] }), referenceFusion.rrf(ranked, { k: 0, weights: [1, 2, 0.5] }));
    // Symmetric lists tie exactly: the smaller id wins.
    assert.deepEqual(
      (
        await Fusion.rrf([
          [2, 1],
          [1, 2],
        ])
      ).map((r) => r.id),
      [1, 2],
    );
    const big = Array.from({ length: 5 }, () => Array.from({ length: 300 }, () => Math.floor(random() * 2000))).map((l) => [...new Set(l)]);
    assert.deepEqual(await Fusion.rrf(big), referenceFusion.rrf(big));
  });

  test('fusion rejects bad input, naming the argument', () => {
    assert.throws(() => Fusion.arr([1, 2], [1], 0.5), /second/);
    assert.throws(() => Fusion.arr([1, NaN], [1, 2], 0.5), /first\[1\]/);
    assert.throws(() => Fusion.arr([1, 2, 3], [1, 2, 3], [0.5, 0.5]), /first/);
    assert.throws(() => Fusion.arr([1, 2], [1, 2], [1.5]), /omega\[0\]/);
    assert.throws(() => Fusion.weightedSum({ a: { ids: [1, 2], scores: [1] } }, { a: 1 }), /lists.a.scores/);
    assert.throws(() => Fusion.weightedSum({ a: { ids: [1], scores: [1] } }, {}), /weights.a/);
    assert.throws(() => Fusion.weightedSum({ a: { ids: [1], scores: [1] } }, { a: 1, typo: 2 }), /weights.typo/);
    assert.throws(() => Fusion.weightedSum({ a: { ids: [1], scores: [Infinity] } }, { a: 1 }), /lists.a.scores\[0\]/);
    assert.throws(() => Fusion.rrf([[1, 'x']]), /lists\[0\]\[1\]/);
    assert.throws(() => Fusion.rrf([[1]], { k: -1 }), /k must be/);
    assert.throws(() => Fusion.rrf([[1], [2]], { weights: [1] }), /weights/);
    assert.throws(() => Fusion.rrf([[7, 7]]), /lists\[0\] contains id 7 twice/);
    assert.throws(() => Fusion.weightedSum({ a: { ids: ['x', 'x'], scores: [1, 2] } }, { a: 1 }), /lists.a contains id x twice/);
  });
});
