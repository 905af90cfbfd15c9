import { demoSnapshots } from '../src/ingest/demoCorpus.js';
import { readSnapshotFile } from '../src/ingest/snapshotReader.js';
import { loadConfig } from '../src/app/config.js';
import { startServer } from '../src/api/server.js';
import { createLogger } from '../src/platform/logger.js';
import { machine, openBenchRuntime, percentile, writeResult } from './common.js';

const QUERY = `query History($subject: ID!, $attribute: String!) {
  factHistory(subject: $subject, attribute: $attribute) { value change validFrom validTo }
}`;

/** Latency of factHistory over HTTP, one request at a time, over every (article, attribute) of the demo corpus. */
export async function runFactHistoryBenchmark(options: { requests: number }): Promise<Record<string, unknown>> {
  const runtime = await openBenchRuntime();
  const server = await startServer(runtime, { ...loadConfig(), port: 0, host: '127.0.0.1', log: createLogger('warn') });
  try {
    const pairs = new Map<string, { subject: string; attribute: string }>();
    for (const snapshot of await demoSnapshots()) {
      const articles = await readSnapshotFile(snapshot.file);
      await runtime.services.ingest.ingest(articles, { takenAt: snapshot.takenAt, source: 'bench' });
      for (const article of articles) {
        for (const attribute of Object.keys(article.infobox)) {
          pairs.set(`${article.id}\u0000${attribute}`, { subject: article.id, attribute });
        }
      }
    }
    const questions = [...pairs.values()];
    const ask = async (variables: { subject: string; attribute: string }): Promise<number> => {
      const started = performance.now();
      const response = await fetch(server.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: QUERY, variables }),
      });
      const body = (await response.json()) as { errors?: unknown };
      if (body.errors) throw new Error(`factHistory failed: ${JSON.stringify(body.errors)}`);
      return performance.now() - started;
    };
    for (let i = 0; i < 100; i += 1) await ask(questions[i % questions.length]!);
    const timings: number[] = [];
    for (let i = 0; i < options.requests; i += 1) timings.push(await ask(questions[(i * 7919) % questions.length]!));
    timings.sort((a, b) => a - b);
    const result = {
      benchmark: 'factHistory',
      machine: machine(),
      requests: options.requests,
      distinctPairs: questions.length,
      p50Ms: Number(percentile(timings, 50).toFixed(2)),
      p99Ms: Number(percentile(timings, 99).toFixed(2)),
      meanMs: Number((timings.reduce((sum, t) => sum + t, 0) / timings.length).toFixed(2)),
    };
    await writeResult('fact-history', result);
    return result;
  } finally {
    await server.close();
    await runtime.close();
  }
}
