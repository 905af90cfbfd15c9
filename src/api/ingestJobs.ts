/**
 * An ingest over GraphQL runs as a job. The mutation answers as soon as the snapshot is recorded
 * as INGESTING; the writing goes on after the request has ended, bound neither by its wall time
 * nor by its client staying connected, and `snapshot(id)` tells how it ended. A client is never
 * told that a write failed which then commits: what it is told at once is only what was checked
 * before anything was written.
 */
import { outsideRequestScope } from '../platform/requestScope.js';
import type { SnapshotRecord } from '../domain/model.js';
import { ApiKeyRepository } from '../graph/apiKeyRepository.js';
import type { IngestOptions, IngestReport, StartedIngest } from '../ingest/ingestService.js';
import type { ArticleInput } from '../ingest/snapshotReader.js';
import type { Logger } from '../platform/logger.js';
import type { RequestContext, Services } from './context.js';

/**
 * Starts the ingest under the request's checks (date, disk, lease, order), then leaves it to run
 * as no caller's work, logged under the request's id. An ingest started with an API key stops
 * and is rolled back when the key is revoked before it ends; a token cannot be revoked, and its
 * expiry does not stop an ingest it was valid to start.
 */
export async function startIngestJob(context: RequestContext, articles: ArticleInput[], options: Omit<IngestOptions, 'revoked'>): Promise<SnapshotRecord> {
  const { services, principal, requestId } = context;
  const keys = new ApiKeyRepository(services.db);
  const revoked = principal?.via === 'api-key' ? () => keys.isRevoked(principal.subject) : undefined;
  const started = await services.ingest.start(articles, { ...options, revoked });
  const log = context.log.child({ requestId, snapshotId: started.snapshot.id });
  log.info({ articles: articles.length, status: started.snapshot.status }, 'ingest job started');
  outsideRequestScope(() => void follow(services, log, started));
  return started.snapshot;
}

/** Logs how the job ended; a written snapshot is embedded at once (`searchable` then tells when a search finds it). */
async function follow(services: Services, log: Logger, started: StartedIngest): Promise<void> {
  let report: IngestReport;
  try {
    report = await started.finished;
  } catch (error) {
    // What snapshot(id) now tells the client: a refusal with its code, or (no code) something unexpected.
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string') log.warn({ err: error, code }, 'ingest job failed');
    else log.error({ err: error }, 'ingest job failed');
    return;
  }
  const { articlesAdded, articlesChanged, articlesRemoved, articlesResumed, changeEvents, alreadyIngested, durationMs } = report;
  log.info(
    { articlesAdded, articlesChanged, articlesRemoved, articlesResumed, changeEvents, alreadyIngested, durationMs: Math.round(durationMs) },
    'ingest job complete',
  );
  services.retrieval.embedSoon();
}
