/** Running ChronoQL and filling its store: serve, demo, ingest, reembed, event-times, migrate. */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Command } from 'commander';
import { openRuntime, type Runtime } from '../app/runtime.js';
import { createApiKey, hashApiKey, Role } from '../api/auth.js';
import { startBootServer, startServer } from '../api/server.js';
import { parseDateInput } from '../domain/time.js';
import { ApiKeyRepository } from '../graph/apiKeyRepository.js';
import { migrate } from '../graph/migrator.js';
import { demoSnapshots } from '../ingest/demoCorpus.js';
import { backfillEventTimes } from '../ingest/eventTimeBackfill.js';
import type { IngestReport } from '../ingest/ingestService.js';
import { readSnapshotFile } from '../ingest/snapshotReader.js';
import type { Logger } from '../platform/logger.js';
import { cliConfig, cliLog, withProgress, withRuntime } from './common.js';

function summary(report: IngestReport): string {
  if (report.alreadyIngested) return `snapshot ${report.snapshot.id} was already ingested; nothing changed`;
  const { sentences: s, facts: f } = report;
  const seconds = report.durationMs / 1000;
  return [
    `snapshot ${report.snapshot.id}: ${report.articles} articles (${report.articlesAdded} added, ${report.articlesChanged} changed, ${report.articlesRemoved} removed, ${report.articlesResumed} already written by an earlier run)`,
    `  sentences: ${s.total} (${s.unchanged} unchanged, ${s.changed} changed, ${s.new} new, ${s.deleted} deleted, ${s.initial} in new articles)`,
    `  facts: ${f.updated} updated, ${f.refined} refined (false changes), ${f.new} new, ${f.removed} removed, ${f.initial} in new articles`,
    `  ${report.changeEvents} change events in ${seconds.toFixed(1)} s (${Math.round(s.total / Math.max(seconds, 1e-3))} sentences/s)`,
  ].join('\n');
}

const DEMO_KEY_FILE = 'demo-api-key';

/**
 * The demo's writer key: the one saved in the data directory while it is still valid, else a
 * new one (the store keeps only its hash, so the token itself is kept in a private file).
 */
async function demoApiKey(runtime: Runtime, dataDir: string): Promise<string> {
  const file = join(dataDir, DEMO_KEY_FILE);
  const saved = await readFile(file, 'utf8').then(
    (text) => text.trim(),
    () => '',
  );
  if (saved && (await new ApiKeyRepository(runtime.services.db).findActiveByHash(hashApiKey(saved)))) return saved;
  const { token } = await createApiKey(runtime.services.db, 'demo', Role.WRITER);
  await writeFile(file, `${token}\n`, { mode: 0o600 });
  return token;
}

/** Long enough for the lease of an ingest killed mid-way to run out, so a re-run resumes it. */
export const CLI_LEASE_WAIT_MS = 120_000;

async function ingestFile(runtime: Runtime, file: string, options: { takenAt: Date; source: string; complete: boolean }): Promise<IngestReport> {
  const articles = await readSnapshotFile(file);
  // The CLI runs with the store's own credentials: its user is the operator.
  const operator = { leaseWaitMs: CLI_LEASE_WAIT_MS, datedAheadAllowed: true };
  return withProgress('articles', (update) => runtime.services.ingest.ingest(articles, { ...options, ...operator, onProgress: update }));
}

/**
 * Waits until every passage and sentence version has its vector (with `takenAt`, only those of
 * the snapshot taken then: an older backlog, another ingest's, is embedded after them and not
 * waited for), embedded by this process's worker or by a running server that holds the
 * embedding lease, so that what was ingested is searchable when the command returns.
 * Interrupted, it resumes on the next run.
 */
async function embedNewUnits(runtime: Runtime, takenAt: Date | null = null): Promise<void> {
  const started = performance.now();
  const { waitedFor } = await withProgress('passages and sentences embedded', (update) => runtime.services.retrieval.catchUp(update, takenAt));
  const seconds = (performance.now() - started) / 1000;
  process.stdout.write(
    `searchable after ${seconds.toFixed(1)} s (${waitedFor} passages and sentences${takenAt ? ' of this snapshot' : ''} still needed a vector when the wait began; embedded with ${runtime.services.retrieval.embedderId} by this process or a running server)\n`,
  );
}

/** Serves until SIGINT/SIGTERM, then shuts down in order: HTTP, feed, driver, managed Neo4j. */
async function serveUntilStopped(runtime: Runtime, log: Logger): Promise<void> {
  const server = await startServer(runtime, { ...runtime.config, log });
  runtime.keepIndexesFresh();
  process.stdout.write(`ChronoQL is serving at ${server.url} (explorer: open it in a browser; health: /health)\nMCP (Streamable HTTP) at ${server.mcpUrl}\n`);
  await new Promise<void>((resolve) => {
    const stop = (signal: string): void => {
      log.info({ signal }, 'shutting down');
      resolve();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await server.close();
  await runtime.close();
}

export function addStoreCommands(program: Command): void {
  program
    .command('serve')
    .description('Start Neo4j if needed, migrate, and serve GraphQL (HTTP + subscriptions) with the explorer.')
    .action(async () => {
      const config = cliConfig();
      const log = cliLog();
      // The port answers (503, "starting") while Neo4j is retried, then the real server takes it.
      const boot = await startBootServer(config);
      let runtime: Runtime;
      try {
        runtime = await openRuntime(config, log, { changeFeed: true, onNeo4jWait: (error) => boot.setProblem(error.message) });
      } finally {
        await boot.close();
      }
      await serveUntilStopped(runtime, log);
    });

  program
    .command('ingest')
    .description('Ingest a dated snapshot from a JSON Lines file (one article per line).')
    .argument('<file>', 'JSON Lines snapshot file')
    .requiredOption('--taken-at <date>', 'the date the snapshot describes (YYYY-MM-DD or ISO date-time)')
    .option('--source <name>', 'where the snapshot comes from', 'cli')
    .option('--complete', 'the file lists every article: remove articles it does not contain', false)
    .action(async (file: string, options: { takenAt: string; source: string; complete: boolean }) => {
      const takenAt = parseDateInput(options.takenAt, '--taken-at');
      await withRuntime(async (runtime) => {
        const report = await ingestFile(runtime, file, { takenAt, source: options.source, complete: options.complete });
        process.stdout.write(summary(report) + '\n');
        await embedNewUnits(runtime, takenAt);
      });
    });

  program
    .command('demo')
    .description('Ingest the demo corpus (data/demo) in date order, then serve.')
    .option('--no-serve', 'only ingest')
    .action(async (options: { serve: boolean }) => {
      const log = cliLog();
      const runtime = await openRuntime(cliConfig(), log, { changeFeed: options.serve });
      try {
        for (const snapshot of await demoSnapshots()) {
          const report = await ingestFile(runtime, snapshot.file, { takenAt: snapshot.takenAt, source: snapshot.source, complete: false });
          process.stdout.write(summary(report) + '\n');
        }
        await embedNewUnits(runtime);
        if (options.serve) {
          const token = await demoApiKey(runtime, cliConfig().dataDir);
          process.stdout.write(
            `Demo API key (writer; for mutations and subscriptions), saved in ${DEMO_KEY_FILE} of the data directory:\n  ${token}\n` +
              `In the explorer, add the header {"Authorization": "Bearer ${token}"}.\n`,
          );
        }
      } catch (error) {
        await runtime.close();
        throw error;
      }
      if (options.serve) await serveUntilStopped(runtime, log);
      else await runtime.close();
    });

  program
    .command('reembed')
    .description('Switch the store to the configured embedder (CHRONOQL_EMBEDDER) and re-embed every passage and sentence with it.')
    .action(() => withRuntime((runtime) => embedNewUnits(runtime), { replaceStoreEmbedder: true }));

  program
    .command('event-times')
    .description(
      'Read and store the event times (when what the text states held) of versions ingested before ChronoQL read them; an interrupted run goes on where it stopped, and a second run finds nothing to do.',
    )
    .action(() =>
      withRuntime(async (runtime) => {
        const report = await withProgress('versions', (update) => backfillEventTimes(runtime.services.db, update));
        process.stdout.write(`event times: read for ${report.versions} versions of ${report.articles} articles\n`);
      }),
    );

  program
    .command('migrate')
    .description('Apply pending schema migrations (serve does this on start).')
    .action(async () => {
      const outcome = await withRuntime((runtime) => migrate(runtime.services.db));
      process.stdout.write(`migrations: ${outcome.applied.length + outcome.alreadyApplied.length} applied in total\n`);
    });
}
