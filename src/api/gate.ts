/**
 * What every transport checks before an operation runs, built once per server so that GraphQL
 * over HTTP, subscriptions over WebSocket and MCP tool calls spend one budget per caller: who
 * the caller is (auth.ts), its rate and cost budgets (limits.ts, shared with the other servers of
 * the store) and the operation's estimated cost (queryCost.ts).
 */
import { randomUUID } from 'node:crypto';
import type { DocumentNode, GraphQLSchema } from 'graphql';
import { RateUsageRepository } from '../graph/rateUsageRepository.js';
import type { Logger } from '../platform/logger.js';
import { Authenticator, type AccessSettings, type Principal } from './auth.js';
import type { ApiHost } from './context.js';
import { QUERY_LIMITS, RequestRateLimiter, SharedRateLedger, type QueryLimits } from './limits.js';
import { chronoqlEstimator, ListSizeStatistics, operationCost } from './queryCost.js';
import { chronoqlSchema } from './schema.js';

/** How often the store's list sizes, which query costs multiply by, are re-read besides after each change. */
const LIST_SIZES_REFRESH_MS = 5 * 60_000;
/** How often a server swaps its callers' counts with the other servers of the store (the slack of a shared rate budget). */
const RATE_SYNC_MS = 1_000;

/** Who may do what, and how much (app/config.ts reads them from the environment). */
export interface AccessAndBudgets {
  access: AccessSettings;
  /** Operations per minute per API key, token subject or (anonymous) client network. */
  rateLimitPerMinute: number;
  /** Estimated query cost (queryCost.ts) per minute per caller. */
  costPerMinute: number;
}

export interface GateSettings extends AccessAndBudgets {
  log: Logger;
  /** Overrides QUERY_LIMITS' cost and response bounds (tests and benchmarks use small ones). */
  limits?: Partial<QueryLimits>;
}

export interface OperationRequest {
  variables?: Record<string, unknown> | null;
  operationName?: string | null;
}

export interface Gate {
  schema: GraphQLSchema;
  limits: QueryLimits;
  access: AccessSettings;
  authenticator: Authenticator;
  /** The principal behind a credential (null without one); a refused credential spends the client network's rate budget. */
  identify(credential: unknown, address: string): Promise<Principal | null>;
  /** One operation of the caller's rate budget: RATE_LIMITED when it is spent. */
  take(caller: string): Promise<void>;
  /** Refuses an operation that costs too much (QUERY_TOO_COSTLY) and charges its estimated cost to the caller. */
  admit(caller: string, document: DocumentNode, request: OperationRequest): Promise<void>;
  close(): void;
}

/** Whose budget a request spends: the credential's, or an anonymous client's network. */
export function callerOf(principal: Principal | null, address: string): string {
  return principal ? `${principal.via}:${principal.subject}` : address;
}

export async function openGate(host: ApiHost, settings: GateSettings): Promise<Gate> {
  const schema = await chronoqlSchema();
  const limits: QueryLimits = { ...QUERY_LIMITS, ...settings.limits };
  const { services } = host;
  const authenticator = new Authenticator(services.db, settings.access);
  const ledger = new SharedRateLedger(randomUUID(), new RateUsageRepository(services.db.bookkeeping), settings.log);
  ledger.start(RATE_SYNC_MS);
  const rateLimiter = new RequestRateLimiter(settings.rateLimitPerMinute, settings.costPerMinute, ledger);
  const listSizes = new ListSizeStatistics(() => services.reads.listSizes(), settings.log);
  await listSizes.start(LIST_SIZES_REFRESH_MS);
  const stopFollowingChanges = services.changeFeed.onAdvance(() => listSizes.refreshSoon());
  const estimator = chronoqlEstimator(listSizes.current);
  return {
    schema,
    limits,
    access: settings.access,
    authenticator,
    // A refused credential spends the client address's budget, so guessing keys is rate limited too.
    identify: (credential, address) =>
      authenticator.authenticate(credential).catch(async (refusal: unknown) => {
        await rateLimiter.take(address);
        throw refusal;
      }),
    take: (caller) => rateLimiter.take(caller),
    admit: (caller, document, request) => rateLimiter.charge(caller, operationCost(schema, document, request, estimator, limits.maxCost)),
    close: () => {
      stopFollowingChanges();
      listSizes.stop();
      ledger.stop();
    },
  };
}
