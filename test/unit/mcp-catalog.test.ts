import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chronoqlSchema } from '../../src/api/schema.js';
import { prepareCatalog } from '../../src/api/mcp/mcpServer.js';
import { resourceAddress } from '../../src/api/mcp/resources.js';

const catalog = prepareCatalog(await chronoqlSchema());
const listing = (name: string) => catalog.tools.get(name)!.listing as unknown as { inputSchema: any; outputSchema: any };

describe('MCP tool catalog', () => {
  it('takes each tool’s arguments from its operation’s variables, typed by the GraphQL schema', () => {
    const ask = listing('ask').inputSchema;
    assert.deepEqual(Object.keys(ask.properties), ['question', 'asOf', 'conversation']);
    assert.deepEqual(ask.required, ['question']);
    assert.equal(ask.additionalProperties, false);
    assert.match(ask.properties.asOf.description, /as of/);
    assert.deepEqual(ask.properties.conversation.items.required, ['question']);
    assert.deepEqual(ask.properties.conversation.items.properties.evidenceIds, {
      type: 'array',
      items: { type: 'string' },
      description: ask.properties.conversation.items.properties.evidenceIds.description,
    });
    const search = listing('search').inputSchema;
    assert.deepEqual(search.properties.mode.enum, ['HYBRID', 'DENSE', 'LEXICAL', 'NEO4J_VECTOR']);
    assert.equal(search.properties.k.type, 'integer');
    const ingest = listing('ingest_snapshot').inputSchema;
    assert.deepEqual(ingest.required, ['takenAt', 'articles']);
    assert.equal(ingest.properties.source.default, 'mcp');
    // An infobox defaults to none: only id and text are required of an article.
    assert.deepEqual(ingest.properties.articles.items.required, ['id', 'text']);
    // What the tool derives itself is no argument.
    assert.deepEqual(Object.keys(listing('article_as_of').inputSchema.properties), ['id', 'asOf', 'changesSince']);
  });

  it('describes each tool’s result by its selection: nullability, dates, enums and what may be left out', () => {
    const answer = listing('ask').outputSchema.properties.answer;
    assert.deepEqual(answer.properties.text.anyOf, [{ type: 'string' }, { type: 'null' }]);
    assert.equal(answer.properties.adopted.type, 'boolean');
    assert.deepEqual(answer.properties.evidence.items.properties.validFrom, { type: 'string', format: 'date-time' });
    assert.deepEqual(answer.properties.evidence.items.properties.validTo.anyOf, [{ type: 'string', format: 'date-time' }, { type: 'null' }]);
    assert.equal(answer.properties.timeScope.anyOf[0].properties.kind.enum[0], 'AT');
    const fact = listing('fact_as_of').outputSchema.properties.fact;
    assert.deepEqual(fact.anyOf[0].properties.change.anyOf, [{ type: 'string', enum: ['NEW', 'UPDATED', 'REFINED'] }, { type: 'null' }]);
    const article = listing('article_as_of').outputSchema;
    assert.deepEqual(article.required, ['article']);
    const { required } = article.properties.article.anyOf[0];
    assert.ok(!required.includes('sentences') && required.includes('facts'));
    for (const name of catalog.tools.keys()) assert.equal(listing(name).outputSchema.type, 'object', name);
  });

  it('reads resource URIs: an article by its encoded id, as of a date or now, and the snapshot list', () => {
    assert.deepEqual(resourceAddress('chronoql://snapshots'), { kind: 'snapshots' });
    assert.deepEqual(resourceAddress('chronoql://article/2030%20Winter%20Olympics?asOf=2024-10-01'), {
      kind: 'article',
      id: '2030 Winter Olympics',
      asOf: '2024-10-01',
    });
    assert.deepEqual(resourceAddress('chronoql://article/France'), { kind: 'article', id: 'France', asOf: null });
    for (const [uri, why] of [
      ['https://example.com/', /resources are chronoql:\/\/snapshots and/],
      ['chronoql://article/', /names no article id/],
      ['chronoql://article/%E0%A4%A', /not URI-encoded UTF-8/],
      ['chronoql://article/France?at=2024-01-01', /the only parameter is asOf, got "at"/],
    ] as const) {
      assert.throws(
        () => resourceAddress(uri),
        (error: any) => error.extensions.code === 'BAD_USER_INPUT' && why.test(error.message),
      );
    }
  });
});
