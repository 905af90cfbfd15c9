import type { ApolloServerPlugin } from '@apollo/server';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { IngestService } from '../ingest/ingestService.js';
import { observeNativeCalls } from '../native/index.js';
import type { RetrievalStatus } from '../retrieval/retrievalService.js';

/** Where the gauges read from: the live services of the runtime. */
export interface MetricSources {
  retrieval: () => RetrievalStatus;
  neo4jRoundTrips: () => number;
  ingest: () => IngestService['progress'];
}

/** Why retrieval is degraded (a failed index sync or embedding pass), or null when it is not. */
export function retrievalProblem(status: RetrievalStatus): string | null {
  return status.syncError ?? status.embedding?.lastError ?? null;
}

/** Prometheus metrics served at /metrics. */
export class Metrics {
  readonly registry = new Registry();
  readonly subscriptions = new Gauge({
    name: 'chronoql_subscriptions_active',
    help: 'Open GraphQL subscriptions.',
    registers: [this.registry],
  });
  readonly slowSubscribers = new Counter({
    name: 'chronoql_subscribers_cut_off_total',
    help: 'Subscribers ended for letting too many changes wait (they resume with afterSeq).',
    registers: [this.registry],
  });
  private readonly requests = new Counter({
    name: 'chronoql_graphql_requests_total',
    help: 'GraphQL operations over HTTP, by type and first root field.',
    labelNames: ['operation', 'field', 'outcome'] as const,
    registers: [this.registry],
  });
  private readonly duration = new Histogram({
    name: 'chronoql_graphql_request_duration_seconds',
    help: 'GraphQL operation latency over HTTP, by type and first root field.',
    labelNames: ['operation', 'field'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [this.registry],
  });
  private readonly nativeCalls = new Histogram({
    name: 'chronoql_native_call_duration_seconds',
    help: 'Native addon calls (vector search, adaptive re-retrieval, adds, classifier), queueing included.',
    labelNames: ['call'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 2],
    registers: [this.registry],
  });

  constructor(sources: MetricSources) {
    const retrieval = sources.retrieval;
    collectDefaultMetrics({ register: this.registry });
    const registers = [this.registry];
    observeNativeCalls((call, seconds) => this.nativeCalls.observe({ call }, seconds));
    new Counter({
      name: 'chronoql_neo4j_round_trips_total',
      help: 'Cypher statements sent to Neo4j by this process.',
      registers,
      collect() {
        this.reset();
        this.inc(sources.neo4jRoundTrips());
      },
    });
    new Gauge({
      name: 'chronoql_ingest_articles',
      help: 'The running ingest of this process: articles written and in the snapshot (0 and 0 when none runs).',
      labelNames: ['state'] as const,
      registers,
      collect() {
        const progress = sources.ingest();
        this.set({ state: 'done' }, progress?.articlesDone ?? 0);
        this.set({ state: 'total' }, progress?.articlesTotal ?? 0);
      },
    });
    new Gauge({
      name: 'chronoql_embedding_pending',
      help: 'Passage and sentence versions waiting for a vector, as last seen by the embedding worker.',
      registers,
      collect() {
        this.set(retrieval().embedding?.pending ?? 0);
      },
    });
    new Gauge({
      name: 'chronoql_embedded_units',
      help: 'Passage and sentence versions this process has embedded since it started.',
      registers,
      collect() {
        this.set(retrieval().embedding?.embeddedTotal ?? 0);
      },
    });
    new Gauge({
      name: 'chronoql_embedding_units_per_second',
      help: 'Embedding throughput of the current pass.',
      registers,
      collect() {
        this.set(retrieval().embedding?.ratePerSecond ?? 0);
      },
    });
    new Gauge({
      name: 'chronoql_vector_index_rows',
      help: 'Rows in the native vector index.',
      labelNames: ['unit'] as const,
      registers,
      collect() {
        for (const [unit, rows] of Object.entries(retrieval().indexedRows)) this.set({ unit }, rows);
      },
    });
    new Gauge({
      name: 'chronoql_retrieval_healthy',
      help: '1 when the last index sync and the embedding worker succeeded, else 0.',
      registers,
      collect() {
        this.set(retrievalProblem(retrieval()) === null ? 1 : 0);
      },
    });
  }

  /** Stops timing native calls (the observer is process-wide). */
  close(): void {
    observeNativeCalls(undefined);
  }

  apolloPlugin(): ApolloServerPlugin {
    return {
      requestDidStart: async () => {
        const started = performance.now();
        return {
          willSendResponse: async ({ operation, errors }) => {
            const kind = operation?.operation ?? 'unknown';
            // Field names come from the schema (aliases are not used), so the label set stays small.
            const first = operation?.selectionSet.selections[0];
            const field = first?.kind === 'Field' ? first.name.value : 'unknown';
            this.requests.inc({ operation: kind, field, outcome: errors?.length ? 'error' : 'ok' });
            this.duration.observe({ operation: kind, field }, (performance.now() - started) / 1000);
          },
        };
      },
    };
  }
}
