import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GraphQLError, getIntrospectionQuery, parse, type GraphQLSchema } from 'graphql';
import { Neo4jError } from 'neo4j-driver';
import { asReported, errorFormatter } from '../../src/api/errorReporting.js';
import { QUERY_LIMITS } from '../../src/api/limits.js';
import { chronoqlEstimator, MIN_LIST_SIZES, operationCost, type ListSizes } from '../../src/api/queryCost.js';
import { chronoqlSchema } from '../../src/api/schema.js';
import { InvalidInputError } from '../../src/domain/errors.js';
import { DatabaseOverloadedError, SessionShares } from '../../src/graph/sessionShares.js';

/** The 324-byte anonymous query that froze the server for 114 s (issue 21, case 1). */
const FAN_OUT = `{ article(id:"France") { sentences { article { sentences { article { sentences { article { sentences { article { ${Array.from({ length: 20 }, (_, i) => `t${i + 1}: text`).join(' ')} } } } } } } } } } }`;

function costOf(schema: GraphQLSchema, query: string, sizes: ListSizes = MIN_LIST_SIZES, variables: Record<string, unknown> = {}): number {
  return operationCost(
    schema,
    parse(query),
    { variables },
    chronoqlEstimator(() => sizes),
    Number.POSITIVE_INFINITY,
  );
}

describe('query cost', () => {
  it('counts list fan-out: the nested sentences query costs sentences⁴ and is refused', async () => {
    const schema = await chronoqlSchema();
    const cost = costOf(schema, FAN_OUT);
    assert.ok(cost > 50 ** 4, `fan-out cost ${cost}`);
    assert.throws(
      () =>
        operationCost(
          schema,
          parse(FAN_OUT),
          {},
          chronoqlEstimator(() => MIN_LIST_SIZES),
          QUERY_LIMITS.maxCost,
        ),
      (error: { extensions?: { code?: string; maxCost?: number } }) =>
        error.extensions?.code === 'QUERY_TOO_COSTLY' && error.extensions.maxCost === QUERY_LIMITS.maxCost,
    );
  });

  it('multiplies by the store’s list sizes, so a bigger store makes the same query costlier', async () => {
    const schema = await chronoqlSchema();
    const query = '{ article(id: "France") { title sentences { text label } facts { value } } }';
    const small = costOf(schema, query);
    const large = costOf(schema, query, { ...MIN_LIST_SIZES, sentencesPerArticle: 500 });
    assert.equal(small, 1 + 1 + (1 + 50 * 2) + (1 + 20 * 1));
    assert.equal(large - small, (500 - 50) * 2);
    assert.ok(large < QUERY_LIMITS.maxCost, 'reading a long article is still allowed');
  });

  it('charges batches per item and aliases per copy: the pool-starving bodies are refused, a documented batch is not', async () => {
    const schema = await chronoqlSchema();
    const queries = Array.from({ length: 256 }, (_, i) => `query ${i}`);
    const one = costOf(schema, 'query($q: [String!]!) { batchSearch(queries: $q, mode: LEXICAL) { id text score } }', MIN_LIST_SIZES, { q: queries });
    assert.equal(one, 256 * (10 + 10 * 3));
    const aliased = costOf(
      schema,
      `query($q: [String!]!) { ${Array.from({ length: 20 }, (_, i) => `a${i}: batchSearch(queries: $q, mode: LEXICAL) { id text score }`).join(' ')} }`,
      MIN_LIST_SIZES,
      { q: queries },
    );
    assert.equal(aliased, 20 * one);
    assert.ok(aliased > QUERY_LIMITS.maxCost);
    const questions = Array.from({ length: 256 }, (_, i) => ({ question: `Who is number ${i}?`, k: 3 }));
    const batchAsk = costOf(schema, 'query($q: [AskInput!]!) { batchAsk(questions: $q) { text adopted evidence { text } } }', MIN_LIST_SIZES, { q: questions });
    assert.ok(batchAsk < QUERY_LIMITS.maxCost, `a batch of 256 questions costs ${batchAsk}`);
    const withK50 = costOf(schema, 'query($q: [AskInput!]!) { a: batchAsk(questions: $q) { text } b: batchAsk(questions: $q) { text } }', MIN_LIST_SIZES, {
      q: questions.map((question) => ({ ...question, k: 50 })),
    });
    assert.ok(withK50 > QUERY_LIMITS.maxCost, `two batches of 256 questions with k 50 cost ${withK50}`);
  });

  it("lets the explorer load the schema: GraphiQL's introspection query is costed by what the schema can return", async () => {
    const schema = await chronoqlSchema();
    // What GraphiQL sends on load: with input-value deprecations and the schema description (it cost 51,853).
    const graphiql = getIntrospectionQuery({ inputValueDeprecation: true, schemaDescription: true });
    const cost = costOf(schema, graphiql);
    assert.ok(cost < QUERY_LIMITS.maxCost / 2, `GraphiQL's introspection costs ${cost}`);
    const types = Object.keys(schema.getTypeMap()).length;
    assert.equal(costOf(schema, '{ __schema { types { name } } }'), 1 + (1 + types * 1), 'a type list is as long as the schema has types');
    assert.ok(
      costOf(schema, `{ ${Array.from({ length: 20 }, (_, i) => `s${i}: __schema { types { fields { args { name } } } }`).join(' ')} }`) > 20 * types,
      'each copy is charged',
    );
  });

  it('counts a connection’s page size', async () => {
    const schema = await chronoqlSchema();
    assert.equal(costOf(schema, '{ articles(first: 100) { edges { node { id } } } }'), 1 + 100 * (1 + 10 * (1 + 1)));
  });
});

/** A held session, released by the test. */
function holder(
  shares: SessionShares,
  caller: string | null,
  log: string[],
  name: string,
): { started: Promise<void>; release: () => void; done: Promise<void> } {
  let release!: () => void;
  let markStarted!: () => void;
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  const released = new Promise<void>((resolve) => (release = resolve));
  const work = () =>
    shares.use(async () => {
      log.push(name);
      markStarted();
      await released;
    });
  const done = caller === null ? work() : shares.withCaller({ caller, deadline: Date.now() + 60_000 }, work);
  return { started, release: () => release(), done };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('database session shares', () => {
  it('holds one caller to its share and serves callers in turn, so a single lookup is not stuck behind a batch', async () => {
    const shares = new SessionShares({ total: 3, perCaller: 2, waitMs: 60_000 });
    const log: string[] = [];
    const batch = Array.from({ length: 6 }, (_, i) => holder(shares, 'batch', log, `batch${i}`));
    await tick();
    assert.deepEqual(log, ['batch0', 'batch1'], 'the batch caller gets its share, not the pool');
    const lookup = holder(shares, 'lookup', log, 'lookup');
    await lookup.started;
    assert.deepEqual(log, ['batch0', 'batch1', 'lookup'], 'another caller gets a session at once');
    batch[0]!.release();
    await tick();
    assert.deepEqual(log.slice(3), ['batch2']);
    const second = holder(shares, 'other', log, 'other');
    lookup.release();
    await tick();
    assert.equal(log.at(-1), 'other', 'a waiting caller with no session is served before the batch’s next item');
    for (const item of [...batch, second]) item.release();
    await Promise.all([...batch.map((item) => item.done), second.done, lookup.done]);
    assert.equal(log.length, 8);
  });

  it('sheds a caller that waits on a full pool with OVERLOADED; waiting behind its own share is only bounded by its deadline', async () => {
    const shares = new SessionShares({ total: 1, perCaller: 1, waitMs: 20 });
    const log: string[] = [];
    const first = holder(shares, 'busy', log, 'first');
    await first.started;
    const refused = shares.withCaller({ caller: 'other', deadline: Date.now() + 60_000 }, () => shares.use(async () => 'ran'));
    await assert.rejects(refused, (error: unknown) => error instanceof DatabaseOverloadedError && error.code === 'OVERLOADED' && error.retryAfterSeconds > 0);
    const system = holder(shares, null, log, 'system');
    first.release();
    await system.started;
    system.release();
    await Promise.all([first.done, system.done]);

    const paced = new SessionShares({ total: 5, perCaller: 1, waitMs: 20 });
    const own = holder(paced, 'batch', log, 'own');
    await own.started;
    const next = paced.withCaller({ caller: 'batch', deadline: Date.now() + 60_000 }, () => paced.use(async () => 'ran'));
    await new Promise((resolve) => setTimeout(resolve, 60));
    own.release();
    assert.equal(await next, 'ran', 'queued behind its own share for longer than waitMs, and not shed');
    const pastDeadline = paced.withCaller({ caller: 'late', deadline: Date.now() - 1 }, () => paced.use(async () => 'ran'));
    assert.equal(await pastDeadline, 'ran', 'a free session is taken even past the deadline: the deadline bounds waiting only');
  });
});

describe('error codes', () => {
  const format = errorFormatter('production');
  const reported = (original: Error) => {
    const error = new GraphQLError(original.message, { originalError: original, path: ['article'] });
    return format(asReported(error, 'http'), error).extensions?.code;
  };

  it('tells a caller BAD_USER_INPUT only for input it got wrong: a runtime RangeError is an internal error', () => {
    assert.equal(reported(new InvalidInputError('asOf: "soon" is not a date')), 'BAD_USER_INPUT');
    assert.equal(reported(new RangeError('Invalid string length')), 'INTERNAL_SERVER_ERROR');
  });

  it('tells a caller SERVICE_UNAVAILABLE, with when to retry, while Neo4j cannot be reached', () => {
    const error = new GraphQLError('down', {
      originalError: new Neo4jError('connect ECONNREFUSED 127.0.0.1:7687', 'ServiceUnavailable', '', ''),
      path: ['snapshots'],
    });
    assert.deepEqual(format(asReported(error, 'websocket'), error).extensions, { code: 'SERVICE_UNAVAILABLE', retryAfterSeconds: 5 });
  });

  it('tells a caller OVERLOADED, with when to retry, when the server sheds its work', () => {
    const error = new GraphQLError('busy', { originalError: new DatabaseOverloadedError('busy', 2), path: ['search'] });
    assert.deepEqual(format(asReported(error, 'http'), error).extensions, { code: 'OVERLOADED', retryAfterSeconds: 2 });
  });
});
