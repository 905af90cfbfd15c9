import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, it, type TestContext } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, McpError } from '@modelcontextprotocol/sdk/types.js';
import { createApiKey, Role } from '../../src/api/auth.js';
import { startServer, type RunningServer } from '../../src/api/server.js';
import { loadConfig } from '../../src/app/config.js';
import type { Runtime } from '../../src/app/runtime.js';
import { ApiKeyRepository } from '../../src/graph/apiKeyRepository.js';
import { countNodes } from '../../src/graph/maintenance.js';
import { createLogger } from '../../src/platform/logger.js';
import { projectRoot } from '../../src/platform/paths.js';
import { ingestDemo, openTestRuntime, testDataDir } from '../support/runtime.js';

/** Low enough to reach in a second, high enough for every check before it. */
const RATE_LIMIT = 60;
const TOOLS = ['article_as_of', 'ask', 'changes_since', 'fact_as_of', 'fact_history', 'ingest_snapshot', 'search', 'snapshot'];
const PRIME_MINISTER = { subject: 'France', attribute: 'prime minister' };

/** One transport's client, with what its server logged and the key it calls with. */
interface Side {
  name: 'http' | 'stdio';
  client: Client;
  log: () => string;
  keyId: string;
}

interface ToolError {
  errors: Array<{ message: string; extensions: { code: string; [key: string]: unknown } }>;
  requestId: string;
}

async function call(side: Side, name: string, args: Record<string, unknown>): Promise<any> {
  const result = (await side.client.callTool({ name, arguments: args })) as CallToolResult;
  assert.ok(!result.isError, `${side.name} ${name} failed: ${JSON.stringify(result.content)}`);
  // The text is the structured result, for clients that read only text.
  assert.deepEqual(JSON.parse((result.content[0] as { text: string }).text), result.structuredContent);
  return result.structuredContent;
}

async function refusal(side: Side, name: string, args: Record<string, unknown>): Promise<ToolError> {
  return toldOf(side, name, (await side.client.callTool({ name, arguments: args })) as CallToolResult);
}

/** The error a tool call was answered with, checked to be in the server's log. */
async function toldOf(side: Side, name: string, result: CallToolResult): Promise<ToolError> {
  assert.equal(result.isError, true, `${side.name} ${name} did not fail: ${JSON.stringify(result.structuredContent)}`);
  const told = JSON.parse((result.content[0] as { text: string }).text) as ToolError;
  // Every error a client is told about is in the log, with its request id and code.
  await inLog(
    side,
    (line) => line.includes(told.requestId) && line.includes(told.errors[0]!.extensions.code),
    `${told.requestId} (${told.errors[0]!.extensions.code})`,
  );
  return told;
}

/** Waits for a line of the side's server log (a stdio server's stderr may come after its answer). */
async function inLog(side: Side, matches: (line: string) => boolean, what: string): Promise<void> {
  const found = () => side.log().split('\n').some(matches);
  for (const waitUntil = Date.now() + 5_000; !found() && Date.now() < waitUntil;) await new Promise((resolve) => setTimeout(resolve, 20));
  assert.ok(found(), `${side.name}: no log line for ${what}`);
}

/**
 * An agent's chain of tools: it searches, asks with the passages it found as the evidence of an
 * earlier turn, and checks the answer against the fact's history. Returns what it did, as a transcript.
 */
async function agentRun(side: Side): Promise<{ transcript: string[]; answer: string; history: any[]; evidenceIds: string[] }> {
  const transcript: string[] = [];
  const asOf = '2024-10-01';
  const hits = (await call(side, 'search', { query: 'prime minister of France', asOf, k: 3 })).hits;
  transcript.push(`search(query: "prime minister of France", asOf: ${asOf}, k: 3)`);
  for (const hit of hits)
    transcript.push(`  #${hit.rank} ${hit.articleId} [${hit.validFrom.slice(0, 10)}, ${hit.validTo?.slice(0, 10) ?? 'now'}) ${hit.text.slice(0, 90)}…`);
  const evidenceIds = hits.map((hit: { id: string }) => hit.id);
  const question = 'Who is the prime minister of France?';
  const conversation = [{ question: 'Find passages about the prime minister of France.', evidenceIds }];
  const { answer } = await call(side, 'ask', { question, asOf, conversation });
  transcript.push(`ask(question: "${question}", asOf: ${asOf}, conversation: [earlier turn with the ${evidenceIds.length} passages as evidence])`);
  transcript.push(
    `  → ${answer.adopted ? `"${answer.text}" (adopted, p(reliable) ${answer.certainty.reliable.toFixed(2)})` : `abstained, guess "${answer.guess}"`}; decision ${answer.decision.action}`,
  );
  transcript.push(
    `  evidence: ${answer.evidence.map((e: any) => `${e.kind} ${e.articleId} [${e.validFrom.slice(0, 10)}, ${e.validTo?.slice(0, 10) ?? 'now'})`).join('; ')}`,
  );
  const { history } = await call(side, 'fact_history', { subject: 'France', attribute: 'Prime Minister' });
  transcript.push('fact_history(subject: "France", attribute: "Prime Minister")');
  for (const version of history)
    transcript.push(`  ${version.value} [${version.validFrom.slice(0, 10)}, ${version.validTo?.slice(0, 10) ?? 'now'}) ${version.change ?? 'first snapshot'}`);
  const holder = history.find(
    (version: any) => version.validFrom <= `${asOf}T00:00:00.000Z` && (version.validTo === null || version.validTo > `${asOf}T00:00:00.000Z`),
  );
  transcript.push(`agent: the answer ${answer.text === holder?.value ? 'agrees with' : 'differs from'} the fact valid on ${asOf} (${holder?.value}).`);
  return { transcript, answer: answer.text, history, evidenceIds };
}

describe('MCP server over Streamable HTTP and stdio', () => {
  let runtime: Runtime;
  let server: RunningServer;
  let reader: string;
  let writer: string;
  const serverLog: string[] = [];
  let stdioLog = '';
  const sides: Side[] = [];
  const transcripts: Record<string, string[]> = {};

  before(async () => {
    runtime = await openTestRuntime({ changeFeed: true });
    await ingestDemo(runtime);
    await runtime.services.retrieval.catchUp();
    const keys = {
      http: await createApiKey(runtime.services.db, 'mcp-http', Role.READER),
      stdio: await createApiKey(runtime.services.db, 'mcp-stdio', Role.READER),
    };
    reader = keys.http.token;
    writer = (await createApiKey(runtime.services.db, 'mcp-writer', Role.WRITER)).token;
    const log = createLogger('debug', new Writable({ write: (chunk, _encoding, done) => (serverLog.push(String(chunk)), done()) }));
    server = await startServer(runtime, { ...loadConfig({}), port: 0, host: '127.0.0.1', log, rateLimitPerMinute: RATE_LIMIT });

    const http = new Client({ name: 'chronoql-test', version: '1' });
    await http.connect(new StreamableHTTPClientTransport(new URL(server.mcpUrl), { requestInit: { headers: { authorization: `Bearer ${reader}` } } }));
    sides.push({ name: 'http', client: http, log: () => serverLog.join(''), keyId: keys.http.key.id });

    // `chronoql mcp` as an MCP client starts it: the build `npm test` compiled, on the test store.
    const environment = Object.fromEntries(Object.entries(process.env).filter((entry): entry is [string, string] => entry[1] !== undefined));
    const stdioTransport = new StdioClientTransport({
      command: process.execPath,
      args: [join(projectRoot(), 'bin', 'chronoql.js'), 'mcp'],
      // Its key can only read, so it never labels an ingest: it starts without the labeler's encoder.
      env: {
        ...environment,
        CHRONOQL_DATA_DIR: testDataDir,
        CHRONOQL_API_KEY: keys.stdio.token,
        CHRONOQL_RATE_LIMIT: String(RATE_LIMIT),
        CHRONOQL_LABEL_ENCODER: 'none',
        LOG_LEVEL: 'warn',
      },
      stderr: 'pipe',
    });
    stdioTransport.stderr!.on('data', (chunk: Buffer) => (stdioLog += chunk.toString()));
    const stdio = new Client({ name: 'chronoql-test', version: '1' });
    await stdio.connect(stdioTransport);
    sides.push({ name: 'stdio', client: stdio, log: () => stdioLog, keyId: keys.stdio.key.id });
  });

  after(async () => {
    for (const side of sides) await side.client.close();
    await server?.close();
    await runtime?.close();
  });

  const eachSide = (title: string, check: (side: Side, t: TestContext) => Promise<void>) => {
    for (const name of ['http', 'stdio'] as const)
      it(`${name}: ${title}`, (t) =>
        check(
          sides.find((side) => side.name === name)!,
          t,
        ));
  };

  eachSide('lists the tools, each with its input and output schema, and the resources', async (side) => {
    const { tools } = await side.client.listTools();
    assert.deepEqual(tools.map((tool) => tool.name).sort(), TOOLS);
    for (const tool of tools)
      assert.ok(tool.description!.length > 100 && tool.inputSchema.type === 'object' && tool.outputSchema?.type === 'object', tool.name);
    const { resources } = await side.client.listResources();
    assert.ok(resources.some((resource) => resource.uri === 'chronoql://snapshots'));
    assert.ok(resources.some((resource) => resource.uri === 'chronoql://article/France' && resource.mimeType === 'text/markdown'));
    const { resourceTemplates } = await side.client.listResourceTemplates();
    assert.deepEqual(
      resourceTemplates.map((template) => template.uriTemplate),
      ['chronoql://article/{id}{?asOf}'],
    );
  });

  eachSide('answers on the demo: the prime minister of France as of two dates, its history, the article, a search', async (side) => {
    for (const [asOf, expected] of [
      ['2024-08-01', 'Gabriel Attal'],
      ['2024-10-01', 'Michel Barnier'],
    ] as const) {
      const { fact } = await call(side, 'fact_as_of', { ...PRIME_MINISTER, asOf });
      assert.equal(fact.value, expected);
      const { answer } = await call(side, 'ask', { question: 'Who is the prime minister of France?', asOf });
      assert.equal(answer.text, expected);
      assert.equal(answer.adopted, true);
      assert.ok(answer.evidence[0].text.includes(expected) && answer.evidence[0].articleId === 'France');
      const { hits } = await call(side, 'search', { query: 'Who is the prime minister of France?', asOf, k: 3 });
      assert.match(hits[0].text, new RegExp(`${expected} has been prime minister`));
    }
    const { answer: september } = await call(side, 'ask', { question: 'Who was the prime minister of France on 10 September 2024?', asOf: '2024-10-01' });
    assert.equal(september.guess, 'Michel Barnier');
    assert.equal(september.evidence[0].statedTime.text, 'since 5 September 2024', 'the time the text states, beside when a snapshot said it');
    const { fact } = await call(side, 'fact_as_of', { ...PRIME_MINISTER, asOf: '2024-08-01' });
    assert.deepEqual(
      [fact.validFrom, fact.validTo, fact.change, fact.previous.value],
      ['2024-07-01T00:00:00.000Z', '2024-10-01T00:00:00.000Z', 'UPDATED', 'Élisabeth Borne'],
    );
    const { history } = await call(side, 'fact_history', PRIME_MINISTER);
    assert.deepEqual(
      history.map((version: { value: string }) => version.value),
      ['Élisabeth Borne', 'Gabriel Attal', 'Michel Barnier', 'François Bayrou'],
    );
    const { article } = await call(side, 'article_as_of', { id: 'France', asOf: '2024-10-01' });
    assert.ok(article.sentences.some((sentence: any) => sentence.label === 'CHANGED' && /Michel Barnier/.test(sentence.text)));
    assert.ok(article.facts.some((f: any) => f.attribute === 'Prime Minister' && f.value === 'Michel Barnier' && f.change === 'UPDATED'));
    const summary = await call(side, 'article_as_of', { id: 'France', asOf: '2024-10-01', changesSince: '2024-07-01' });
    assert.equal(summary.article.sentences, undefined);
    const events = summary.changes.edges.map((edge: any) => edge.node);
    assert.ok(events.length > 0 && events.every((event: any) => event.at === '2024-10-01T00:00:00.000Z'));
    assert.ok(
      events.some((event: any) => event.kind === 'FACT_UPDATED' && event.fact.value === 'Michel Barnier' && event.previousFact.value === 'Gabriel Attal'),
    );
    const resource = await side.client.readResource({ uri: 'chronoql://article/France?asOf=2024-08-01' });
    const markdown = (resource.contents[0] as { text: string }).text;
    assert.match(markdown, /^# France\n\n_as of 2024-08-01_\n/);
    assert.match(markdown, /- Prime Minister: Gabriel Attal \(since 2024-07-01, until 2024-10-01\)/);
    const snapshots = JSON.parse(((await side.client.readResource({ uri: 'chronoql://snapshots' })).contents[0] as { text: string }).text);
    assert.deepEqual(
      snapshots.map((snapshot: { id: string }) => snapshot.id),
      ['2023-07-01', '2024-07-01', '2024-10-01', '2025-01-15'],
    );
  });

  eachSide('reads the changes after a sequence number and after a date, filtered and paged', async (side) => {
    const first = await call(side, 'changes_since', { afterSeq: 10, first: 5 });
    assert.deepEqual(
      first.changes.edges.map((edge: any) => edge.node.seq),
      [11, 12, 13, 14, 15],
    );
    assert.equal(first.changes.pageInfo.hasNextPage, true);
    const updates = await call(side, 'changes_since', { since: '2024-10-01', kinds: ['FACT_UPDATED'], articleIds: ['France'] });
    const nodes = updates.changes.edges.map((edge: any) => edge.node);
    assert.ok(
      nodes.some(
        (node: any) => node.fact.attribute === 'Prime Minister' && node.previousFact.value === 'Michel Barnier' && node.fact.value === 'François Bayrou',
      ),
    );
    assert.ok(nodes.every((node: any) => node.kind === 'FACT_UPDATED' && node.articleId === 'France' && node.at > '2024-10-01T00:00:00.000Z'));
  });

  eachSide('abstains when it does not trust an answer: no text, a guess or none, and why', async (side) => {
    const { answer } = await call(side, 'ask', { question: 'Who is the mayor of Atlantis?', asOf: '2024-10-01' });
    assert.equal(answer.adopted, false);
    assert.equal(answer.text, null);
    assert.match(answer.decision.cues[0], /not adopted|knows nothing/);
  });

  eachSide("refuses a reader's ingest_snapshot with FORBIDDEN, writing nothing", async (side) => {
    const before = await countNodes(runtime.services.db, 'Snapshot');
    const told = await refusal(side, 'ingest_snapshot', { takenAt: '2025-02-01', articles: [{ id: 'Atlantis', text: 'Atlantis has a mayor.' }] });
    assert.equal(told.errors[0]!.extensions.code, 'FORBIDDEN');
    assert.match(told.errors[0]!.message, /requires the writer role; this api-key has reader/);
    assert.equal(await countNodes(runtime.services.db, 'Snapshot'), before);
  });

  eachSide('answers bad input with a clear tool error and goes on serving', async (side) => {
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ['no_such_tool', {}, /there is no tool "no_such_tool"; the tools are ask, search/],
      ['search', { query: 'France', k: 'three' }, /argument "k" got invalid value "three"; Int cannot represent non-integer value/],
      ['fact_as_of', { subject: 'France' }, /argument "attribute" of required type "String!" was not provided/],
      ['fact_as_of', { ...PRIME_MINISTER, asOf: '2024-13-45' }, /argument "asOf" got invalid value "2024-13-45"; DateTime: "2024-13-45" is not a date/],
      ['fact_as_of', { ...PRIME_MINISTER, as_of: '2024-08-01' }, /fact_as_of has no argument "as_of"; its arguments are subject, attribute, asOf/],
      ['ask', { question: 'x'.repeat(5_000) }, /question: must be at most 2000 characters, got 5000/],
      ['search', { query: 'France', k: 1000 }, /k must be between 1 and 100, got 1000/],
    ];
    for (const [name, args, message] of cases) {
      const told = await refusal(side, name, args);
      assert.equal(told.errors[0]!.extensions.code, 'BAD_USER_INPUT', `${name} ${JSON.stringify(args).slice(0, 80)}`);
      assert.match(told.errors[0]!.message, message);
    }
    // Arguments over a GraphQL request body's size: the stdio server refuses them as a tool error; over HTTP the body never gets in.
    const huge = { subject: 'France', attribute: 'y'.repeat(1_100_000) };
    if (side.name === 'stdio') {
      const told = await refusal(side, 'fact_as_of', huge);
      assert.equal(told.errors[0]!.extensions.code, 'PAYLOAD_TOO_LARGE');
    } else {
      await assert.rejects(side.client.callTool({ name: 'fact_as_of', arguments: huge }), /Payload Too Large: Request body must not exceed 1048576 bytes/);
    }
    // A resource that is not there, and a method the server does not have: JSON-RPC errors, logged too.
    await assert.rejects(side.client.readResource({ uri: 'chronoql://article/Atlantis' }), (error: McpError) => {
      assert.equal(error.code, -32002);
      assert.match(error.message, /no article has the id "Atlantis"/);
      assert.equal((error.data as ToolError).errors[0]!.extensions.code, 'NOT_FOUND');
      return true;
    });
    await inLog(side, (line) => line.includes('resource chronoql://article/Atlantis') && line.includes('NOT_FOUND'), 'the missing resource');
    await assert.rejects(side.client.listPrompts(), (error: McpError) => error.code === -32601);
    await inLog(side, (line) => line.includes('MCP request refused') && line.includes('-32601'), 'the unknown method');
    assert.equal((await call(side, 'fact_as_of', { ...PRIME_MINISTER, asOf: '2024-08-01' })).fact.value, 'Gabriel Attal');
  });

  eachSide('runs an agent-like chain: search, ask with the evidence found, fact_history', async (side, t) => {
    const run = await agentRun(side);
    assert.equal(run.answer, 'Michel Barnier');
    assert.equal(run.history.length, 4);
    transcripts[side.name] = run.transcript;
    t.diagnostic(`transcript over ${side.name}:\n${run.transcript.join('\n')}`);
    // The same chain gives the same answers over both transports.
    if (transcripts.http && transcripts.stdio) assert.deepEqual(transcripts.http, transcripts.stdio);
  });

  eachSide('reaches the rate limit: RATE_LIMITED with the seconds to wait, logged with the request id', async (side) => {
    let told: ToolError | undefined;
    for (let calls = 0; calls < 3 * RATE_LIMIT && !told; calls += 1) {
      const result = (await side.client.callTool({ name: 'fact_as_of', arguments: PRIME_MINISTER })) as CallToolResult;
      if (result.isError) told = await toldOf(side, 'fact_as_of', result);
    }
    assert.ok(told, 'never rate limited');
    assert.equal(told.errors[0]!.extensions.code, 'RATE_LIMITED');
    assert.match(told.errors[0]!.message, new RegExp(`over ${RATE_LIMIT} requests per minute`));
    assert.ok((told.errors[0]!.extensions.retryAfterSeconds as number) >= 1);
  });

  eachSide('refuses a revoked key (UNAUTHENTICATED) within seconds', async (side) => {
    await new ApiKeyRepository(runtime.services.db).revoke(side.keyId);
    // A verified key is trusted for a second before Neo4j is asked again.
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    const told = await refusal(side, 'fact_as_of', PRIME_MINISTER);
    assert.equal(told.errors[0]!.extensions.code, 'UNAUTHENTICATED');
    assert.match(told.errors[0]!.message, /unknown or revoked API key/);
  });

  it('http: a writer ingests a snapshot as the mutation does; browsers from unlisted origins and foreign Host names are refused', async () => {
    const client = new Client({ name: 'chronoql-test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.mcpUrl), { requestInit: { headers: { authorization: `Bearer ${writer}` } } }));
    try {
      const args = {
        takenAt: '2025-02-01',
        articles: [{ id: 'Atlantis', text: 'Atlantis has a mayor.', infobox: [{ attribute: 'Mayor', value: 'Poseidon' }] }],
      };
      const { snapshot } = (await client.callTool({ name: 'ingest_snapshot', arguments: args })).structuredContent as any;
      assert.deepEqual([snapshot.id, snapshot.status], ['2025-02-01', 'INGESTING']);
      let status = snapshot;
      for (let tries = 0; tries < 200 && !(status.status === 'COMPLETE' && status.searchable); tries++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        status = ((await client.callTool({ name: 'snapshot', arguments: { id: '2025-02-01' } })).structuredContent as any).snapshot;
      }
      assert.deepEqual([status.status, status.searchable, status.articleCount, status.failure], ['COMPLETE', true, 1, null]);
      const again = (await client.callTool({ name: 'ingest_snapshot', arguments: args })).structuredContent as any;
      assert.equal(again.snapshot.status, 'COMPLETE', 'the same snapshot again changes nothing');
    } finally {
      await client.close();
    }
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    };
    const post = (headers: Record<string, string>) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const sent = httpRequest(
          server.mcpUrl,
          { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers } },
          (response) => {
            let body = '';
            response.on('data', (chunk: Buffer) => (body += chunk.toString()));
            response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
          },
        );
        sent.on('error', reject);
        sent.end(JSON.stringify(initialize));
      });
    assert.equal((await post({})).status, 200);
    const foreign = await post({ origin: 'http://evil.example' });
    assert.equal(foreign.status, 403);
    assert.match(foreign.body, /origin \\"http:\/\/evil.example\\" may not call \/mcp; list it in CHRONOQL_ALLOWED_ORIGINS/);
    // DNS rebinding: a page on evil.example, whose name now points at 127.0.0.1, calls with its own Host.
    assert.equal((await post({ host: `evil.example:${server.port}` })).status, 403);
    assert.equal((await fetch(server.mcpUrl)).status, 405);
  });
});
