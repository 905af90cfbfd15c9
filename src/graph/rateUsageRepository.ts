import { int, type CypherRunner } from './database.js';

/** What one caller spent in one clock-minute window: operations and estimated query cost. */
export interface CallerUsage {
  caller: string;
  requests: number;
  cost: number;
}

/** Per-caller usage written by each server of a store, so a rate budget holds across all of them. */
export class RateUsageRepository {
  constructor(private readonly db: CypherRunner) {}

  /** Records this server's usage in `window` and returns the other servers' usage in it, summed per caller. */
  async exchange(server: string, window: number, mine: readonly CallerUsage[]): Promise<CallerUsage[]> {
    return this.db.run<CallerUsage>(
      `CALL () {
         UNWIND $mine AS usage
         MERGE (r:RateUsage {window: $window, server: $server, caller: usage.caller})
         SET r.requests = usage.requests, r.cost = usage.cost
       }
       MATCH (r:RateUsage {window: $window}) WHERE r.server <> $server
       RETURN r.caller AS caller, sum(r.requests) AS requests, sum(r.cost) AS cost`,
      { server, window: int(window), mine: mine.map((usage) => ({ ...usage, requests: int(usage.requests), cost: int(usage.cost) })) },
    );
  }

  /** Drops the usage of windows before `window`. */
  async forgetBefore(window: number): Promise<void> {
    await this.db.run(`MATCH (r:RateUsage) WHERE r.window < $window DETACH DELETE r`, { window: int(window) });
  }
}
