import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { burstArticles, runSubscriberBurst, runTraffic, warmUp } from '../../bench/load.js';
import { startServer, type RunningServer } from '../../src/api/server.js';
import { createApiKey, Role } from '../../src/api/auth.js';
import { loadConfig } from '../../src/app/config.js';
import { createLogger } from '../../src/platform/logger.js';
import type { Runtime } from '../../src/app/runtime.js';
import { ingestDemo, openTestRuntime } from '../support/runtime.js';

/** A short run of `chronoql bench load` (which runs minutes, with a separate server process): no errors, no lost events. */
describe('load, short', () => {
  let runtime: Runtime;
  let server: RunningServer;
  before(async () => {
    runtime = await openTestRuntime({ changeFeed: true });
    await ingestDemo(runtime);
    await runtime.services.retrieval.catchUp();
    server = await startServer(runtime, {
      ...loadConfig({ CHRONOQL_RATE_LIMIT: '10000000', CHRONOQL_COST_BUDGET: '1000000000' }),
      port: 0,
      host: '127.0.0.1',
      log: createLogger('silent'),
    });
    await warmUp(server.url);
  });
  after(async () => {
    await server.close();
    await runtime.close();
  });

  it('serves 5 s of mixed traffic on 4 connections without an error', { timeout: 60_000 }, async (t) => {
    const run = await runTraffic(server.url, 4, 5);
    t.diagnostic(JSON.stringify(run));
    assert.ok(run.requests > 50, `${run.requests} requests`);
    assert.equal(run.errors, 0);
  });

  it('delivers a burst of 2,000 changes to 20 subscribers, each exactly once and in order', { timeout: 120_000 }, async (t) => {
    const { token } = await createApiKey(runtime.services.db, 'load test', Role.READER);
    const afterSeq = (await runtime.services.reads.latestChangeSeq()) + 1;
    await runtime.services.ingest.ingest(burstArticles(1, 'marker'), { takenAt: new Date(), source: 'test' });
    const burst = await runSubscriberBurst({
      url: server.url,
      token,
      subscribers: 20,
      events: 2_000,
      afterSeq,
      ingest: () => runtime.services.ingest.ingest(burstArticles(2_000, 'burst'), { takenAt: new Date(Date.now() + 1_000), source: 'test', batchSize: 500 }),
    });
    t.diagnostic(JSON.stringify(burst));
    assert.deepEqual(burst.received, { min: 2_000, max: 2_000 });
    assert.equal(burst.exactlyOnceInOrder, 20);
  });
});
