import type { ApolloServerPlugin } from '@apollo/server';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { RetrievalStatus } from '../retrieval/retrievalService.js';

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
    help: 'GraphQL operations over HTTP.',
    labelNames: ['operation', 'outcome'] as const,
    registers: [this.registry],
  });
  private readonly duration = new Histogram({
    name: 'chronoql_graphql_request_duration_seconds',
    help: 'GraphQL operation latency over HTTP.',
    labelNames: ['operation'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [this.registry],
  });

  constructor(retrieval: () => RetrievalStatus) {
    collectDefaultMetrics({ register: this.registry });
    const registers = [this.registry];
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

  apolloPlugin(): ApolloServerPlugin {
    return {
      requestDidStart: async () => {
        const started = performance.now();
        return {
          willSendResponse: async ({ operation, errors }) => {
            const kind = operation?.operation ?? 'unknown';
            this.requests.inc({ operation: kind, outcome: errors?.length ? 'error' : 'ok' });
            this.duration.observe({ operation: kind }, (performance.now() - started) / 1000);
          },
        };
      },
    };
  }
}
