/**
 * The CPU test comparisons, run on the CUDA backend. Skipped (visibly, with
 * the reason) when the CUDA build or a usable device is missing, except with
 * CHRONOQL_REQUIRE_CUDA=1 (native/tools/gpu-check.sh sets it), where a missing
 * build or device fails the run. Data is synthetic and seeded; results are
 * compared with the TypeScript reference and with the CPU backend on the same
 * data.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, test } from 'node:test';

import { OPEN_END, VectorIndex, backend, configureNative, observeDevicePlacement, type DevicePlacementChange } from '../../src/native/index.js';
import { addonPaths } from '../../src/native/loader.js';
import { ReferenceVectorIndex } from '../../eval/native/reference.js';
import { compareExactly, compareWithReference, randomMatrix, seededRandom, syntheticRows, tiedRows } from '../../eval/native/testing.js';
import type { Metric, QueryResult, SearchOptions, Storage, VectorIndexOptions } from '../../src/native/types.js';

function skipReason(): string | false {
  const paths = addonPaths();
  if (!existsSync(paths.cuda)) return `no CUDA build (${paths.cuda} is missing; it is built when nvcc is on PATH)`;
  let info;
  try {
    info = backend();
  } catch (error) {
    return `the addon does not load: ${(error as Error).message}`;
  }
  if (info.build !== 'cuda' || info.devices.length === 0) {
    return `CUDA not used: ${info.cudaUnavailableReason ?? 'unknown reason'}`;
  }
  return false;
}

// Read here, not through src/app/config.ts: the GPU machine runs this file without node_modules.
const required = process.env.CHRONOQL_REQUIRE_CUDA?.trim() ?? '';
if (!['', '0', '1'].includes(required)) throw new Error(`CHRONOQL_REQUIRE_CUDA must be 0 or 1, got "${required}"`);
if (required === '1') configureNative({ device: 'auto', requireCuda: true });

const skip = skipReason();
if (skip && required === '1') {
  test('native addon (CUDA): CHRONOQL_REQUIRE_CUDA=1, so the GPU tests must run', () => assert.fail(`they cannot: ${skip}`));
} else if (skip) {
  // A skipped test (not only a skipped suite) so the run's summary counts it.
  test('native addon (CUDA): same comparisons as the CPU tests, on the GPU', { skip }, () => undefined);
  test('with CHRONOQL_REQUIRE_CUDA=1 this file fails here instead of skipping', () => {
    // Without the runner's NODE_TEST_CONTEXT, which would make the child skip its files.
    const { NODE_TEST_CONTEXT: _runner, ...environment } = process.env;
    const run = spawnSync(process.execPath, [...process.execArgv, '--test', '--test-reporter=spec', fileURLToPath(import.meta.url)], {
      encoding: 'utf8',
      env: { ...environment, CHRONOQL_REQUIRE_CUDA: '1' },
      timeout: 60_000,
    });
    assert.equal(run.status, 1, run.stdout + run.stderr);
    assert.match(
      run.stdout,
      /CHRONOQL_REQUIRE_CUDA=1 but (the CUDA build is missing|no CUDA device is usable)|GPU tests must run[^]*they cannot: no CUDA build/,
    );
    assert.match(run.stdout, /ℹ skipped 0/);
  });
}

describe('native addon (CUDA)', { skip }, () => {
  const scratch = mkdtempSync(join(tmpdir(), 'chronoql-native-gpu-'));
  after(() => rmSync(scratch, { recursive: true, force: true }));

  interface Trio {
    gpu: VectorIndex;
    cpu: VectorIndex;
    reference: ReferenceVectorIndex;
  }

  async function buildTrio(options: VectorIndexOptions, batches: Parameters<VectorIndex['addBatch']>[0][]): Promise<Trio> {
    const trio = {
      gpu: VectorIndex.create({ ...options, device: 'cuda' }),
      cpu: VectorIndex.create({ ...options, device: 'cpu' }),
      reference: new ReferenceVectorIndex(options),
    };
    assert.equal(trio.gpu.backend, 'cuda');
    for (const batch of batches) {
      await trio.gpu.addBatch(batch);
      await trio.cpu.addBatch(batch);
      trio.reference.addBatch(batch);
    }
    return trio;
  }

  async function expectAgreement(trio: Trio, queries: Float32Array, k: number, options: SearchOptions, tolerance = 1e-4): Promise<QueryResult[]> {
    const gpu = await trio.gpu.search(queries, k, options);
    const expected = trio.reference.search(queries, k, options);
    const prepared = trio.reference.prepareQueries(queries);
    assert.deepEqual(compareWithReference(gpu, expected, trio.reference, prepared, options, tolerance), [], 'GPU vs reference');
    const cpu = await trio.cpu.search(queries, k, options);
    assert.deepEqual(compareWithReference(gpu, cpu, trio.reference, prepared, options, tolerance), [], 'GPU vs CPU');
    return gpu;
  }

  const days = (random: () => number, n: number): number[] => Array.from({ length: n }, () => Math.floor(random() * 120));

  for (const storage of ['fp32', 'fp16'] as Storage[]) {
    for (const metric of ['cosine', 'ip'] as Metric[]) {
      test(`random data, ${storage}, ${metric}, small and large batches`, async () => {
        const random = seededRandom(2000);
        const d = 96;
        const trio = await buildTrio({ dimension: d, storage, metric }, [syntheticRows(random, 20000, d)]);
        for (const queryCount of [1, 7, 32, 100]) {
          await expectAgreement(trio, randomMatrix(random, queryCount, d), 10, { asOf: days(random, queryCount) });
        }
      });
    }
  }

  test('exact ties are broken by the smaller id, identically to the reference', async () => {
    const random = seededRandom(99);
    const d = 12;
    const trio = await buildTrio({ dimension: d, metric: 'ip' }, [tiedRows(random, d)]);
    for (const queryCount of [1, 16, 40]) {
      const queries = randomMatrix(random, queryCount, d, true);
      assert.deepEqual(compareExactly(await trio.gpu.search(queries, 25, { asOf: 0 }), trio.reference.search(queries, 25, { asOf: 0 })), []);
    }
  });

  test('d not a multiple of 8, exclusions, k above the valid rows, large k', async () => {
    const random = seededRandom(3);
    const d = 37;
    const trio = await buildTrio({ dimension: d }, [syntheticRows(random, 5000, d)]);
    const queries = randomMatrix(random, 33, d);
    const asOf = days(random, 33);
    const first = await trio.gpu.search(queries, 10, { asOf });
    await expectAgreement(trio, queries, 10, { asOf, exclude: first.map((r) => Array.from(r.ids)) });
    await expectAgreement(trio, queries, 256, { asOf }); // largest k the kernel keeps itself
    await expectAgreement(trio, queries, 700, { asOf }); // served by the CPU backend
    const few = await buildTrio({ dimension: 8 }, [syntheticRows(random, 40, 8)]);
    await expectAgreement(few, randomMatrix(random, 5, 8), 100, { asOf: days(random, 5) });
  });

  test('all rows filtered, empty index', async () => {
    const random = seededRandom(4);
    const rows = syntheticRows(random, 300, 16);
    rows.validFrom.fill(500);
    rows.validTo.fill(OPEN_END);
    const trio = await buildTrio({ dimension: 16 }, [rows]);
    for (const r of await trio.gpu.search(randomMatrix(random, 9, 16), 5, { asOf: 499 })) assert.equal(r.ids.length, 0);
    const empty = VectorIndex.create({ dimension: 16, device: 'cuda' });
    for (const r of await empty.search(randomMatrix(random, 3, 16), 5, { asOf: 0 })) assert.equal(r.ids.length, 0);
  });

  test('remove, invalidate and further adds reach the device copy', async () => {
    const random = seededRandom(5);
    const d = 64;
    const rows = syntheticRows(random, 8000, d);
    const trio = await buildTrio({ dimension: d }, [rows]);
    const queries = randomMatrix(random, 20, d);
    const asOf = days(random, 20);
    await expectAgreement(trio, queries, 10, { asOf });
    const removed = Array.from(rows.ids).filter((_, i) => i % 4 === 0);
    for (const index of [trio.gpu, trio.cpu]) await index.remove(removed);
    trio.reference.remove(removed);
    // Ends at 30, or at the start of a row that starts later (an end before the start is refused).
    const endedAt = Array.from(rows.ids.keys()).filter((i) => i % 9 === 2);
    const ended = endedAt.map((i) => rows.ids[i]!);
    const ends = endedAt.map((i) => Math.max(30, rows.validFrom[i]!));
    for (const index of [trio.gpu, trio.cpu]) await index.invalidate(ended, ends);
    trio.reference.invalidate(ended, ends);
    const more = syntheticRows(random, 3000, d, { firstId: 8000 });
    for (const index of [trio.gpu, trio.cpu]) await index.addBatch(more);
    trio.reference.addBatch(more);
    await expectAgreement(trio, queries, 10, { asOf });
    assert.ok(trio.gpu.deviceMemoryBytes >= 11000 * d * 4);
  });

  test('save on the GPU index, load onto the GPU', async () => {
    const random = seededRandom(6);
    const d = 48;
    const trio = await buildTrio({ dimension: d, storage: 'fp16' }, [syntheticRows(random, 4000, d)]);
    const path = join(scratch, 'gpu.cqlv');
    await trio.gpu.save(path);
    const loaded = await VectorIndex.load(path, { device: 'cuda' });
    assert.equal(loaded.backend, 'cuda');
    const queries = randomMatrix(random, 12, d);
    const options = { asOf: days(random, 12) };
    assert.deepEqual(compareExactly(await loaded.search(queries, 10, options), await trio.gpu.search(queries, 10, options)), []);
  });

  test('fp16 and fp32 agree within half precision; ARR blended search', async () => {
    const random = seededRandom(7);
    const d = 128;
    const rows = syntheticRows(random, 10000, d);
    const half = await buildTrio({ dimension: d, storage: 'fp16' }, [rows]);
    const full = await buildTrio({ dimension: d, storage: 'fp32' }, [rows]);
    const queries = randomMatrix(random, 16, d);
    const options = { asOf: days(random, 16) };
    const a = await half.gpu.search(queries, 10, options);
    const b = await full.gpu.search(queries, 10, options);
    a.forEach((r, q) => r.scores.forEach((s, i) => assert.ok(Math.abs(s - b[q]!.scores[i]!) < 2e-3)));
    const second = randomMatrix(random, 16, d);
    const omega = Array.from({ length: 16 }, (_, i) => i / 15);
    const gpu = await full.gpu.searchArr(queries, second, omega, 10, options);
    const cpu = await full.cpu.searchArr(queries, second, omega, 10, options);
    gpu.forEach((r, q) => r.scores.forEach((s, i) => assert.ok(Math.abs(s - cpu[q]!.scores[i]!) < 1e-4)));
  });

  test('an index that outgrows its device memory cap is searched on the CPU, gives the device memory back and says why', async () => {
    const random = seededRandom(10);
    const d = 64;
    const first = syntheticRows(random, 2000, d);
    // Room for the first rows (and the workspace), not for three times as many.
    const cap = 4000 * d * 4;
    const changes: DevicePlacementChange[] = [];
    observeDevicePlacement((change) => changes.push(change));
    try {
      const capped = VectorIndex.create({ dimension: d, device: 'cuda', deviceMemoryCapBytes: cap });
      const cpu = VectorIndex.create({ dimension: d, device: 'cpu' });
      for (const index of [capped, cpu]) await index.addBatch(first);
      const queries = randomMatrix(random, 24, d);
      const options = { asOf: days(random, 24) };
      await capped.search(queries, 10, options);
      assert.ok(capped.deviceMemoryBytes > 0);
      assert.equal(capped.searchedOnHostBecause, undefined);
      const more = syntheticRows(random, 6000, d, { firstId: 2000 });
      for (const index of [capped, cpu]) await index.addBatch(more);
      const onHost = await capped.search(queries, 10, options);
      assert.deepEqual(compareExactly(onHost, await cpu.search(queries, 10, options)), []);
      assert.equal(capped.deviceMemoryBytes, 0);
      assert.match(
        capped.searchedOnHostBecause ?? '',
        /^the index needs [\d.]+ MiB of GPU memory, more than the 1\.0 MiB CHRONOQL_DEVICE_MEMORY_MB allows it$/,
      );
      assert.deepEqual(changes, [{ onDevice: false, reason: capped.searchedOnHostBecause, dimension: d, storage: 'fp32', rows: 8000 }]);
    } finally {
      observeDevicePlacement(undefined);
    }
  });

  test('concurrent searches equal sequential ones', async () => {
    const random = seededRandom(8);
    const d = 64;
    const index = VectorIndex.create({ dimension: d, device: 'cuda' });
    await index.addBatch(syntheticRows(random, 30000, d));
    const batches = Array.from({ length: 16 }, (_, i) => ({ queries: randomMatrix(random, 1 + i * 5, d), asOf: 20 + i }));
    const sequential: QueryResult[][] = [];
    for (const b of batches) sequential.push(await index.search(b.queries, 10, { asOf: b.asOf }));
    const concurrent = await Promise.all(batches.map((b) => index.search(b.queries, 10, { asOf: b.asOf })));
    concurrent.forEach((r, i) => assert.deepEqual(compareExactly(r, sequential[i]!), []));
  });
});
