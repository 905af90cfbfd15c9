import type { BenchmarkRepository } from '../graph/benchmarkRepository.js';
import type { Database } from '../graph/database.js';
import type { Loaders } from '../graph/loaders.js';
import type { ReadRepository } from '../graph/readRepository.js';
import type { ChangeFeed } from '../ingest/changeFeed.js';
import type { IngestService } from '../ingest/ingestService.js';
import type { DiskSpace } from '../platform/diskSpace.js';
import type { Logger } from '../platform/logger.js';
import type { AskService } from '../qa/askService.js';
import type { SpanReader } from '../qa/reader/spanReader.js';
import type { RetrievalService } from '../retrieval/retrievalService.js';
import type { Principal } from './auth.js';
import type { ResponseBudget } from './responseBudget.js';

/** Long-lived services shared by every request. */
export interface Services {
  db: Database;
  reads: ReadRepository;
  ingest: IngestService;
  changeFeed: ChangeFeed;
  retrieval: RetrievalService;
  reader: SpanReader;
  answering: AskService;
  benchmarkItems: BenchmarkRepository;
  /** Free space on the data directory's filesystem (ingests and /health check it). */
  disk: DiskSpace;
}

// A type alias rather than an interface so it satisfies graphql-ws's Record-shaped context.
export type RequestContext = {
  services: Services;
  loaders: Loaders;
  /** The request's "now", the default asOf: one instant for every field so lookups batch together. */
  now: Date;
  /** Who is calling: null for an anonymous read. */
  principal: Principal | null;
  /** The HTTP request's `x-request-id`, or the subscription's id: what the log files an error under. */
  requestId: string | null;
  /** Whose budget the request spends (rate limits, database sessions): the key, token subject or client address. */
  caller: string;
  /** What the operation may still resolve (fields, text, wall time); null for in-process operations, which are not limited. */
  budget: ResponseBudget | null;
  /** The serving server's log: work the request leaves running (an ingest job) logs there, under requestId. */
  log: Logger;
};

/** The running application as the API sees it: its services, and a context for each operation. */
export interface ApiHost {
  services: Services;
  /** Subscriptions pass `cache: false` (see Loaders). */
  requestContext(options?: {
    cache?: boolean;
    principal?: Principal | null;
    requestId?: string | null;
    caller?: string;
    budget?: ResponseBudget | null;
    log?: Logger;
  }): RequestContext;
}
