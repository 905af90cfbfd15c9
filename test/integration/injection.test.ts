import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { articleIdOf, INVISIBLE_CHARACTER } from '../../src/domain/model.js';
import {
  getNamedType,
  getNullableType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  type GraphQLArgument,
  type GraphQLInputType,
  type GraphQLOutputType,
} from 'graphql';
import { chronoqlSchema } from '../../src/api/schema.js';
import { startServer, type RunningServer } from '../../src/api/server.js';
import { createApiKey, Role } from '../../src/api/auth.js';
import { loadConfig } from '../../src/app/config.js';
import { createLogger } from '../../src/platform/logger.js';
import type { Runtime } from '../../src/app/runtime.js';
import { ingestDemo, ingestOutcome, openTestRuntime, postGraphql } from '../support/runtime.js';

/** What the world sends: Cypher and Lucene syntax, quotes, control and Unicode tricks, a near-megabyte. */
const HOSTILE = [
  "'",
  '"',
  '`',
  '\\',
  '}) MATCH (n) DETACH DELETE n //',
  "' OR 1=1 //",
  '`) DETACH DELETE n RETURN (`',
  '$articleId',
  '{id: "x"}',
  'title:(a OR b) AND NOT c~2 *?',
  'CALL db.labels() YIELD label RETURN label',
  '\u202Egnp.exe\u200D\u0000\u0007',
  'e\u0301\u0301\u0301 ＦＵＬＬＷＩＤＴＨ 😀',
  '\uD800 lone surrogate',
  'x'.repeat(900_000),
  'a.'.repeat(400_000),
];

/** A valid value of an input type (a string argument filled with a plain word). */
function sample(type: GraphQLInputType): unknown {
  const inner = getNullableType(type) as GraphQLInputType;
  if (isListType(inner)) return [sample(inner.ofType)];
  if (isEnumType(inner)) return inner.getValues()[0]!.value;
  if (isInputObjectType(inner)) {
    return Object.fromEntries(
      Object.values(inner.getFields())
        .filter((f) => isNonNullType(f.type) && f.defaultValue === undefined)
        .map((f) => [f.name, sample(f.type)]),
    );
  }
  if (isScalarType(inner)) {
    return ({ Int: 1, Float: 1, Boolean: false, DateTime: '2024-10-01', ID: 'France', String: 'France' } as Record<string, unknown>)[inner.name];
  }
  throw new Error(`no sample for ${String(type)}`);
}

function selection(type: GraphQLOutputType): string {
  return isObjectType(getNamedType(type)) ? ' { __typename }' : '';
}

/** Every string argument of every query, with the path to it inside input objects. */
async function stringArguments(): Promise<Array<{ field: string; args: readonly GraphQLArgument[]; path: string[]; type: GraphQLOutputType }>> {
  const schema = await chronoqlSchema();
  const found: Array<{ field: string; args: readonly GraphQLArgument[]; path: string[]; type: GraphQLOutputType }> = [];
  for (const field of Object.values(schema.getQueryType()!.getFields())) {
    const walk = (type: GraphQLInputType, path: string[]): void => {
      const named = getNamedType(type);
      if (isScalarType(named) && (named.name === 'String' || named.name === 'ID')) found.push({ field: field.name, args: field.args, path, type: field.type });
      if (isInputObjectType(named)) for (const inner of Object.values(named.getFields())) walk(inner.type, [...path, inner.name]);
    };
    for (const arg of field.args) walk(arg.type, [arg.name]);
  }
  return found;
}

/** The argument values with `value` placed at `path` (lists get it in their first element). */
function withValueAt(args: readonly GraphQLArgument[], path: string[], value: string): Record<string, unknown> {
  const values: Record<string, unknown> = Object.fromEntries(
    args.filter((a) => isNonNullType(a.type) && a.defaultValue === undefined).map((a) => [a.name, sample(a.type)]),
  );
  const type = args.find((a) => a.name === path[0])!.type;
  const put = (holder: Record<string, unknown>, key: string, inputType: GraphQLInputType, rest: string[]): void => {
    const inner = getNullableType(inputType) as GraphQLInputType;
    if (isListType(inner)) {
      const element = rest.length === 0 ? value : { ...(sample(inner.ofType) as object) };
      holder[key] = [element];
      if (rest.length > 0) put(holder[key] as unknown as Record<string, unknown>, '0', inner.ofType, rest);
      return;
    }
    if (rest.length === 0) return void (holder[key] = value);
    const object = { ...((holder[key] as object | undefined) ?? (sample(inner) as object)) } as Record<string, unknown>;
    holder[key] = object;
    const fields = (getNamedType(inner) as unknown as { getFields(): Record<string, { type: GraphQLInputType }> }).getFields();
    put(object, rest[0]!, fields[rest[0]!]!.type, rest.slice(1));
  };
  put(values, path[0]!, type, path.slice(1));
  return values;
}

describe('hostile strings through every string argument', () => {
  let runtime: Runtime;
  let server: RunningServer;
  let token: string;
  const post = (query: string, variables: Record<string, unknown>) => postGraphql(server.url, query, { token, variables });
  const fingerprint = async () =>
    runtime.services.db.run(
      `MATCH (n) WHERE NOT n:Migration AND NOT n:ApiKey AND NOT n:Lease AND NOT n:RetrievalState
         AND NOT n:RateUsage
       WITH labels(n)[0] AS label, count(*) AS nodes ORDER BY label
       RETURN collect([label, nodes]) AS nodes, COUNT { ()-[]->() } AS relationships`,
    );

  before(async () => {
    runtime = await openTestRuntime();
    await ingestDemo(runtime);
    await runtime.services.retrieval.catchUp();
    server = await startServer(runtime, { ...loadConfig(), port: 0, host: '127.0.0.1', log: createLogger('silent') });
    ({ token } = await createApiKey(runtime.services.db, 'injection test', Role.ADMIN));
  });
  after(async () => {
    await server.close();
    await runtime.close();
  });

  it('answers each query with a normal result or a clean client error, and changes nothing', { timeout: 600_000 }, async (t) => {
    const before = await fingerprint();
    const targets = await stringArguments();
    assert.ok(targets.length >= 20, `${targets.length} string arguments`);
    let requests = 0;
    const codes = new Map<string, number>();
    for (const target of targets) {
      for (const hostile of HOSTILE) {
        // Only the arguments given are declared: the others keep their defaults.
        const variables = withValueAt(target.args, target.path, hostile);
        const given = target.args.filter((a) => a.name in variables);
        const declared = given.map((a) => `$${a.name}: ${String(a.type)}`).join(', ');
        const passed = given.map((a) => `${a.name}: $${a.name}`).join(', ');
        const query = `query(${declared}) { ${target.field}(${passed})${selection(target.type)} }`;
        const { status, body } = await post(query, variables);
        requests += 1;
        const where = `${target.field}(${target.path.join('.')}) ← ${JSON.stringify(hostile.slice(0, 40))}`;
        assert.ok(status === 200 || status === 400, `${where}: HTTP ${status}`);
        for (const error of body.errors ?? []) {
          const code = error.extensions?.code ?? 'none';
          codes.set(code, (codes.get(code) ?? 0) + 1);
          assert.notEqual(code, 'INTERNAL_SERVER_ERROR', `${where}: ${error.message}`);
          assert.doesNotMatch(error.message, /Neo4j|Cypher|Lucene|at .*\.(ts|js):\d+/, where);
        }
      }
    }
    assert.deepEqual(await fingerprint(), before, 'the database is unchanged');
    t.diagnostic(`${requests} requests over ${targets.length} string arguments; error codes: ${JSON.stringify(Object.fromEntries(codes))}`);
  });

  it('stores hostile ids, titles, texts and infobox entries verbatim (ids and titles in Unicode NFC), and removes nothing', async () => {
    const before = await runtime.services.db.run<{ n: number }>(`MATCH (a:Article) WHERE a.validTo IS NULL RETURN count(a) AS n`);
    // Ids and attribute names must show every character they have (ingest-safety tests that refusal).
    const stored = HOSTILE.filter((text) => !text.includes('\uD800') && text.length < 1000 && !INVISIBLE_CHARACTER.test(text));
    const articles = stored.map((text, i) => ({
      id: `${text}#${i}`,
      title: text,
      text: `${text} is here.`,
      infobox: [{ attribute: `${text} attr`, value: text }],
    }));
    const { body } = await post(`mutation($articles: [ArticleInput!]!) { ingestSnapshot(takenAt: "2025-06-01", articles: $articles) { id articleCount } }`, {
      articles,
    });
    assert.deepEqual(body, { data: { ingestSnapshot: { id: '2025-06-01', articleCount: stored.length } } });
    const outcome = await ingestOutcome((query, variables) => post(query, variables).then((response) => response.body), '2025-06-01');
    assert.equal(outcome.status, 'COMPLETE', JSON.stringify(outcome.failure));
    for (const [i, text] of stored.entries()) {
      const read = await post(`query($id: ID!) { article(id: $id) { id title facts { attribute value } } }`, { id: `${text}#${i}` });
      assert.deepEqual(
        read.body.data,
        { article: { id: articleIdOf(`${text}#${i}`), title: text.trim().normalize('NFC'), facts: [{ attribute: `${text} attr`, value: text }] } },
        JSON.stringify(text),
      );
    }
    const afterwards = await runtime.services.db.run<{ n: number }>(`MATCH (a:Article) WHERE a.validTo IS NULL RETURN count(a) AS n`);
    assert.equal(afterwards[0]!.n, before[0]!.n + stored.length);
    const lone = await post(`mutation($articles: [ArticleInput!]!) { ingestSnapshot(takenAt: "2025-07-01", articles: $articles) { id } }`, {
      articles: [{ id: 'x', text: '\uD800' }],
    });
    assert.equal(lone.body.errors?.[0]?.extensions?.code, 'INVALID_SNAPSHOT');
  });
});
