import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildSchema, getIntrospectionQuery, graphql, GraphQLError, parse, type GraphQLSchema } from 'graphql';
import { Neo4jError } from 'neo4j-driver';
import { anonymousCaller, clientNetwork } from '../../src/api/clientAddress.js';
import { asReported, errorFormatter } from '../../src/api/errorReporting.js';
import { QUERY_LIMITS } from '../../src/api/limits.js';
import { chronoqlEstimator, MIN_LIST_SIZES, operationCost, type ListSizes } from '../../src/api/queryCost.js';
import { ResponseBudget, withResponseBudget, type ResponseLimits } from '../../src/api/responseBudget.js';
import { chronoqlSchema } from '../../src/api/schema.js';
import { InvalidInputError } from '../../src/domain/errors.js';
import { FairShares, OverloadedError } from '../../src/platform/fairShares.js';
import { inRequestScope, RequestTimeoutError } from '../../src/platform/requestScope.js';

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

/**
 * A store of one article with `sentences` sentences, each of which links back to it: the shape of
 * issue 30's anonymous query that ran the server out of memory.
 */
function articleSchema(sentences: number, calls: { sentenceLists: number; texts: number }): GraphQLSchema {
  const schema = buildSchema(
    'type Query { article: Article! slowArticle: Article! } type Article { sentences: [Sentence!]! } type Sentence { text: String! article: Article! }',
  );
  const list = Array.from({ length: sentences }, (_, i) => ({ i }));
  const article = {};
  schema.getQueryType()!.getFields().article!.resolve = () => article;
  schema.getQueryType()!.getFields().slowArticle!.resolve = async () => new Promise((resolve) => setTimeout(() => resolve(article), 30));
  const fields = (type: string) => (schema.getType(type) as import('graphql').GraphQLObjectType).getFields();
  fields('Article').sentences!.resolve = async () => {
    calls.sentenceLists += 1;
    return list;
  };
  fields('Sentence').text!.resolve = (sentence: { i: number }) => {
    calls.texts += 1;
    return `sentence ${sentence.i}`;
  };
  fields('Sentence').article!.resolve = () => article;
  return withResponseBudget(schema);
}

async function runBudgeted(schema: GraphQLSchema, query: string, limits: Partial<ResponseLimits>) {
  const budget = new ResponseBudget(
    { maxResponseFields: 200_000, maxResponseTextChars: 16_000_000, requestBudgetMs: 60_000, ...limits },
    { caller: 'test', deadline: Date.now() + (limits.requestBudgetMs ?? 60_000) },
  );
  const result = await graphql({ schema, source: query, contextValue: { budget } });
  return { result, cutOff: budget.cutOff?.extensions.code ?? null };
}

describe('response budget', () => {
  const fanOut = '{ article { sentences { article { sentences { text } } } } }';

  it('cuts off the fan-out when a list resolves past the budget, before graphql-js starts on its items', async () => {
    const calls = { sentenceLists: 0, texts: 0 };
    const { result, cutOff } = await runBudgeted(articleSchema(3_000, calls), fanOut, { maxResponseFields: 20_000 });
    assert.equal(cutOff, 'RESPONSE_TOO_LARGE');
    assert.ok(calls.texts <= 20_000, `${calls.texts} texts resolved`);
    assert.ok((result.errors?.length ?? 0) <= 3_001, `${result.errors?.length} errors: the lists after the cut-off answer empty instead of failing`);
  });

  it('counts characters of text and lets what fits through', async () => {
    const calls = { sentenceLists: 0, texts: 0 };
    assert.equal(
      (await runBudgeted(articleSchema(100, calls), '{ article { sentences { text } } }', { maxResponseTextChars: 500 })).cutOff,
      'RESPONSE_TOO_LARGE',
    );
    const { result, cutOff } = await runBudgeted(articleSchema(100, calls), '{ article { sentences { text } } }', {});
    assert.equal(cutOff, null);
    assert.equal((result.data as { article: { sentences: unknown[] } }).article.sentences.length, 100);
  });

  it('stops resolving past the deadline, root fields included (QUERY_TIMEOUT)', async () => {
    const calls = { sentenceLists: 0, texts: 0 };
    const { cutOff } = await runBudgeted(articleSchema(100, calls), '{ slowArticle { sentences { text } } }', { requestBudgetMs: 5 });
    assert.equal(cutOff, 'QUERY_TIMEOUT');
    assert.equal(calls.texts, 0, 'the list that resolved past the deadline is cut off before its items');
  });

  it('leaves operations without a budget (in-process evaluations) alone', async () => {
    const calls = { sentenceLists: 0, texts: 0 };
    const result = await graphql({ schema: articleSchema(300, calls), source: fanOut, contextValue: {} });
    assert.equal(result.errors, undefined);
    assert.equal(calls.texts, 300 * 300);
  });
});

/** A held session, released by the test. */
function holder(shares: FairShares, caller: string | null, log: string[], name: string): { started: Promise<void>; release: () => void; done: Promise<void> } {
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
  const done = caller === null ? work() : inRequestScope({ caller, deadline: Date.now() + 60_000 }, work);
  return { started, release: () => release(), done };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('fair shares (database sessions, CPU slots)', () => {
  it('holds one caller to its share and serves callers in turn, so a single lookup is not stuck behind a batch', async () => {
    const shares = new FairShares({ total: 3, perCaller: 2, waitMs: 60_000 }, 'sessions');
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

  it('sheds a caller that waits on a full pool with OVERLOADED; waiting behind its own share is bounded by its deadline, past which no work starts', async () => {
    const shares = new FairShares({ total: 1, perCaller: 1, waitMs: 20 }, 'sessions');
    const log: string[] = [];
    const first = holder(shares, 'busy', log, 'first');
    await first.started;
    const refused = inRequestScope({ caller: 'other', deadline: Date.now() + 60_000 }, () => shares.use(async () => 'ran'));
    await assert.rejects(refused, (error: unknown) => error instanceof OverloadedError && error.code === 'OVERLOADED' && error.retryAfterSeconds > 0);
    const system = holder(shares, null, log, 'system');
    first.release();
    await system.started;
    system.release();
    await Promise.all([first.done, system.done]);

    const paced = new FairShares({ total: 5, perCaller: 1, waitMs: 20 }, 'sessions');
    const own = holder(paced, 'batch', log, 'own');
    await own.started;
    const next = inRequestScope({ caller: 'batch', deadline: Date.now() + 60_000 }, () => paced.use(async () => 'ran'));
    await new Promise((resolve) => setTimeout(resolve, 60));
    own.release();
    assert.equal(await next, 'ran', 'queued behind its own share for longer than waitMs, and not shed');
    const pastDeadline = inRequestScope({ caller: 'late', deadline: Date.now() - 1 }, () => paced.use(async () => 'ran'));
    await assert.rejects(
      pastDeadline,
      (error: unknown) => error instanceof RequestTimeoutError && error.code === 'QUERY_TIMEOUT',
      'a request past its deadline starts no more work',
    );
  });

  it('holds a unit for work that is not one promise until it is released, once', async () => {
    const shares = new FairShares({ total: 1, perCaller: 1, waitMs: 60_000 }, 'change replays');
    const release = await shares.hold();
    let second = false;
    const next = shares.hold().then((releaseNext) => {
      second = true;
      releaseNext();
    });
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(second, false, 'the second waits while the first is held');
    release();
    release();
    await next;
    assert.deepEqual(shares.load, { inFlight: 0, waiting: 0 }, 'a second release frees nothing more');
  });

  it('bounds the units one caller may have waiting: more are shed at once, other callers still queue', async () => {
    const shares = new FairShares({ total: 1, perCaller: 1, waitMs: 60_000, queuePerCaller: 2 }, 'CPU slots');
    const log: string[] = [];
    const running = holder(shares, 'flood', log, 'running');
    await running.started;
    const queued = [holder(shares, 'flood', log, 'queued0'), holder(shares, 'flood', log, 'queued1')];
    const shed = inRequestScope({ caller: 'flood', deadline: Date.now() + 60_000 }, () => shares.use(async () => 'ran'));
    await assert.rejects(shed, (error: unknown) => error instanceof OverloadedError && /2 units of work waiting for CPU slots/.test(error.message));
    const victim = holder(shares, 'victim', log, 'victim');
    assert.deepEqual(shares.load, { inFlight: 1, waiting: 3 });
    running.release();
    await victim.started;
    assert.deepEqual(log, ['running', 'victim'], 'the other caller is served before the flood’s queue');
    victim.release();
    for (const item of queued) {
      await item.started;
      item.release();
    }
    await Promise.all([running.done, victim.done, ...queued.map((item) => item.done)]);
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
    const error = new GraphQLError('busy', { originalError: new OverloadedError('busy', 2), path: ['search'] });
    assert.deepEqual(format(asReported(error, 'http'), error).extensions, { code: 'OVERLOADED', retryAfterSeconds: 2 });
  });
});

describe('anonymous callers', () => {
  it('are counted by network, so rotating addresses within one spends one budget: IPv4 /24, IPv6 /64, IPv4-mapped IPv6 as IPv4', () => {
    assert.deepEqual(
      [
        '203.0.113.77',
        '::ffff:203.0.113.9',
        '::FFFF:CB00:7109',
        '2001:db8:0:7:1:2:3:4',
        '2001:0db8:0000:0007:ffff::1',
        '2001:db8::1',
        'fe80::1%eth0',
        '::1',
      ].map(clientNetwork),
      ['203.0.113.0/24', '203.0.113.0/24', '203.0.113.0/24', '2001:db8:0:7::/64', '2001:db8:0:7::/64', '2001:db8:0:0::/64', 'fe80:0:0:0::/64', '0:0:0:0::/64'],
    );
    assert.equal(anonymousCaller('198.51.100.1'), anonymousCaller('198.51.100.254'));
    assert.notEqual(anonymousCaller('198.51.100.1'), anonymousCaller('198.51.101.1'));
    assert.notEqual(anonymousCaller('2001:db8:0:7::1'), anonymousCaller('2001:db8:0:8::1'));
    assert.equal(clientNetwork(undefined), 'unknown', 'a socket already closed');
  });
});
