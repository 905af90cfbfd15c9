import type { ApolloServerPlugin } from '@apollo/server';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Prometheus metrics served at /metrics. */
export class Metrics {
  readonly registry = new Registry();
  readonly subscriptions = new Gauge({
    name: 'chronoql_subscriptions_active',
    help: 'Open GraphQL subscriptions.',
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

  constructor() {
    collectDefaultMetrics({ register: this.registry });
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
