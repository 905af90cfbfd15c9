import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { createClient } from 'graphql-ws';
import { SignJWT } from 'jose';
import WebSocket from 'ws';
import { ApiKeyRepository } from '../../src/graph/apiKeyRepository.js';
import { countNodes } from '../../src/graph/maintenance.js';
import { HTTP_LIMITS, startServer, type RunningServer, type ServerOptions } from '../../src/api/server.js';
import { createApiKey, Role } from '../../src/api/auth.js';
import { loadConfig } from '../../src/app/config.js';
import { createLogger } from '../../src/platform/logger.js';
import type { Runtime } from '../../src/app/runtime.js';
import { ingestOutcome, openTestRuntime, postGraphql, resetKnowledge } from '../support/runtime.js';

const INGEST = `mutation($complete: Boolean! = false) { ingestSnapshot(takenAt: "2024-01-01", complete: $complete, articles: [{id: "A", text: "One."}]) { id } }`;
const HS_SECRET = 'a-test-secret-of-at-least-32-bytes!!';
const ISSUER = 'https://issuer.test';
const AUDIENCE = 'chronoql-test';

function post(server: RunningServer, query: string, options: { token?: string; variables?: Record<string, unknown> } = {}) {
  return postGraphql(server.url, query, options);
}

/** How the ingest of snapshot `id` ended, asked of `server` with `token` as a client would. */
function outcomeOf(server: RunningServer, id: string, token: string) {
  return ingestOutcome((query, variables) => post(server, query, { token, variables }).then((response) => response.body), id);
}

/** The first event or error of one subscription, over a fresh connection. */
async function subscribeOnce(
  server: RunningServer,
  options: { connectionParams?: Record<string, unknown>; extensions?: Record<string, unknown>; origin?: string; query?: string },
): Promise<unknown> {
  const client = createClient({
    url: server.url.replace('http', 'ws'),
    webSocketImpl: class extends WebSocket {
      constructor(address: string, protocols?: string | string[]) {
        super(address, protocols, options.origin ? { origin: options.origin } : {});
      }
    },
    connectionParams: options.connectionParams,
    retryAttempts: 0,
  });
  try {
    return await new Promise((resolve) => {
      client.subscribe(
        { query: options.query ?? 'subscription { changes(afterSeq: 0) { seq } }', extensions: options.extensions },
        { next: (value) => resolve(value), error: (error) => resolve(error), complete: () => resolve('complete') },
      );
    });
  } finally {
    await client.dispose();
  }
}

/** The close code and reason when the server closed the connection instead of answering. */
function closeOf(outcome: unknown): string | undefined {
  const close = outcome as { code?: number; reason?: string };
  return typeof close?.code === 'number' ? `${close.code} ${close.reason}` : undefined;
}

/** The HTTP status of an anonymous query sent from `localAddress` (any of 127.0.0.0/8 reaches a server on 127.0.0.1). */
function statusFrom(server: RunningServer, localAddress: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const sent = httpRequest(server.url, { method: 'POST', localAddress, headers: { 'content-type': 'application/json' } }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    sent.on('error', reject);
    sent.end(JSON.stringify({ query: '{ snapshots { id } }' }));
  });
}

function codeOf(outcome: unknown): string | undefined {
  return Array.isArray(outcome) ? (outcome[0] as { extensions?: { code?: string } })?.extensions?.code : undefined;
}

describe('access control', () => {
  let runtime: Runtime;
  const servers: RunningServer[] = [];
  const logs: string[] = [];
  let reader: string;
  let writer: string;
  let admin: string;

  async function serve(overrides: Partial<ServerOptions> = {}): Promise<RunningServer> {
    const log = createLogger('debug', new Writable({ write: (chunk, _encoding, done) => (logs.push(String(chunk)), done()) }));
    const server = await startServer(runtime, { ...loadConfig({}), port: 0, host: '127.0.0.1', log, ...overrides });
    servers.push(server);
    return server;
  }

  before(async () => {
    runtime = await openTestRuntime();
    await resetKnowledge(runtime);
    reader = (await createApiKey(runtime.services.db, 'reader', Role.READER)).token;
    writer = (await createApiKey(runtime.services.db, 'writer', Role.WRITER)).token;
    admin = (await createApiKey(runtime.services.db, 'admin', Role.ADMIN)).token;
  });
  after(async () => {
    for (const server of servers) await server.close();
    await runtime.close();
  });

  it('refuses mutations without a key (UNAUTHENTICATED) or below the writer role (FORBIDDEN), writing nothing', async () => {
    const server = await serve();
    const anonymous = await post(server, INGEST);
    assert.equal(anonymous.body.errors?.[0]?.extensions.code, 'UNAUTHENTICATED');
    const readOnly = await post(server, INGEST, { token: reader });
    assert.equal(readOnly.body.errors?.[0]?.extensions.code, 'FORBIDDEN');
    assert.match(readOnly.body.errors![0]!.message, /requires the writer role; this api-key has reader/);
    const completeByWriter = await post(server, INGEST, { token: writer, variables: { complete: true } });
    assert.equal(completeByWriter.body.errors?.[0]?.extensions.code, 'FORBIDDEN');
    assert.equal(await countNodes(runtime.services.db, 'Snapshot'), 0);
    assert.deepEqual((await post(server, INGEST, { token: writer })).body.data, { ingestSnapshot: { id: '2024-01-01' } });
    assert.equal((await post(server, INGEST, { token: admin, variables: { complete: true } })).body.errors?.[0]?.extensions.code, 'SNAPSHOT_OUT_OF_ORDER');
    assert.equal((await outcomeOf(server, '2024-01-01', writer)).status, 'COMPLETE');
    // Reads stay public by default.
    assert.deepEqual((await post(server, '{ snapshots { id } }')).body.data, { snapshots: [{ id: '2024-01-01' }] });
  });

  it('stops an ingest whose API key is revoked while it runs before its next batch, and rolls it back', async () => {
    const server = await serve();
    await resetKnowledge(runtime);
    const soonRevoked = await createApiKey(runtime.services.db, 'revoked mid-ingest', Role.WRITER);
    // Six batches of 100: the revocation lands while the first is written.
    const articles = Array.from({ length: 600 }, (_, i) => ({ id: `r${i}`, text: `Article ${i} of a snapshot whose key is revoked.` }));
    const mutation = `mutation($articles: [ArticleInput!]!) { ingestSnapshot(takenAt: "2024-06-01", articles: $articles) { id status } }`;
    const started = await post(server, mutation, { token: soonRevoked.token, variables: { articles } });
    assert.deepEqual(started.body.data, { ingestSnapshot: { id: '2024-06-01', status: 'INGESTING' } });
    await new ApiKeyRepository(runtime.services.db).revoke(soonRevoked.key.id);
    const outcome = await outcomeOf(server, '2024-06-01', admin);
    assert.equal(outcome.status, 'FAILED');
    assert.equal(outcome.failure?.code, 'CREDENTIAL_REVOKED');
    assert.match(outcome.failure!.message, /was revoked; the ingest stopped before its next batch and was rolled back: nothing of it is stored/);
    assert.equal(await countNodes(runtime.services.db, 'Article'), 0);
    assert.deepEqual((await post(server, '{ snapshots { id } }')).body.data, { snapshots: [] });
  });

  it('refuses unknown, malformed and revoked keys, and keeps only hashes', async () => {
    const server = await serve();
    const created = await createApiKey(runtime.services.db, 'soon revoked', Role.ADMIN);
    await new ApiKeyRepository(runtime.services.db).revoke(created.key.id);
    for (const token of [created.token, `${created.token.slice(0, -1)}x`, 'cq_short', 'not-a-key']) {
      const { status, body } = await post(server, '{ snapshots { id } }', { token });
      assert.equal(status, 401, token);
      assert.equal(body.errors?.[0]?.extensions.code, 'UNAUTHENTICATED', token);
    }
    const stored = await runtime.services.db.run<{ props: Record<string, unknown> }>(`MATCH (k:ApiKey) RETURN properties(k) AS props`);
    assert.ok(stored.length >= 4);
    for (const { props } of stored) {
      assert.match(String(props.hash), /^[0-9a-f]{64}$/);
      assert.ok(!JSON.stringify(props).includes('cq_'), 'no secret is stored');
    }
  });

  it('accepts JWTs (HS256, RS256) only with the right issuer, audience, expiry and role', async () => {
    const hsServer = await serve({
      access: { readAccess: 'public', jwt: { algorithm: 'HS256', key: HS_SECRET, issuer: ISSUER, audience: AUDIENCE, roleClaim: 'role' } },
    });
    const secret = new TextEncoder().encode(HS_SECRET);
    const sign = (claims: Record<string, unknown>, edit: (jwt: SignJWT) => SignJWT = (jwt) => jwt) =>
      edit(new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setSubject('alice').setIssuer(ISSUER).setAudience(AUDIENCE).setExpirationTime('5m')).sign(
        secret,
      );
    await resetKnowledge(runtime);
    assert.deepEqual((await post(hsServer, INGEST, { token: await sign({ role: 'writer' }) })).body.data, { ingestSnapshot: { id: '2024-01-01' } });
    assert.equal((await outcomeOf(hsServer, '2024-01-01', writer)).status, 'COMPLETE');
    const refusals = {
      'reader role': [await sign({ role: 'reader' }), 'FORBIDDEN'],
      'no role': [await sign({}), 'UNAUTHENTICATED'],
      'other issuer': [await sign({ role: 'admin' }, (jwt) => jwt.setIssuer('https://evil.test')), 'UNAUTHENTICATED'],
      'other audience': [await sign({ role: 'admin' }, (jwt) => jwt.setAudience('someone-else')), 'UNAUTHENTICATED'],
      expired: [await sign({ role: 'admin' }, (jwt) => jwt.setExpirationTime(Math.floor(Date.now() / 1000) - 60)), 'UNAUTHENTICATED'],
      'other secret': [
        await new SignJWT({ role: 'admin' })
          .setProtectedHeader({ alg: 'HS256' })
          .setSubject('x')
          .setIssuer(ISSUER)
          .setAudience(AUDIENCE)
          .setExpirationTime('5m')
          .sign(new TextEncoder().encode('x'.repeat(40))),
        'UNAUTHENTICATED',
      ],
      'alg none': [
        `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify({ role: 'admin', sub: 'x', iss: ISSUER, aud: AUDIENCE, exp: 9e9 })).toString('base64url')}.`,
        'UNAUTHENTICATED',
      ],
      // A subject that is no name (it would be logged as "[object Object]" or as nothing).
      'object sub': [
        await new SignJWT({ role: 'admin', sub: { id: 1 } } as never)
          .setProtectedHeader({ alg: 'HS256' })
          .setIssuer(ISSUER)
          .setAudience(AUDIENCE)
          .setExpirationTime('5m')
          .sign(secret),
        'UNAUTHENTICATED',
      ],
      'empty sub': [await sign({ role: 'admin' }, (jwt) => jwt.setSubject(' ')), 'UNAUTHENTICATED'],
    } as const;
    for (const [what, [token, code]] of Object.entries(refusals)) {
      assert.equal((await post(hsServer, INGEST, { token })).body.errors?.[0]?.extensions.code, code, what);
    }

    const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const rsServer = await serve({
      access: {
        readAccess: 'public',
        jwt: {
          algorithm: 'RS256',
          key: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
          issuer: ISSUER,
          audience: AUDIENCE,
          roleClaim: 'chronoql_role',
        },
      },
    });
    const rsToken = await new SignJWT({ chronoql_role: 'reader' })
      .setProtectedHeader({ alg: 'RS256' })
      .setSubject('bob')
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setExpirationTime('5m')
      .sign(privateKey);
    assert.equal((await post(rsServer, INGEST, { token: rsToken })).body.errors?.[0]?.extensions.code, 'FORBIDDEN');
    // An HS256 token signed with the public key as its secret (algorithm confusion) is refused.
    const confused = await new SignJWT({ chronoql_role: 'admin' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('x')
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setExpirationTime('5m')
      .sign(new TextEncoder().encode(publicKey.export({ type: 'spki', format: 'pem' }).toString()));
    assert.equal((await post(rsServer, INGEST, { token: confused })).body.errors?.[0]?.extensions.code, 'UNAUTHENTICATED');
  });

  it('can require a key for reads', async () => {
    const server = await serve({ access: { readAccess: 'key', jwt: null } });
    const anonymous = await post(server, '{ snapshots { id } }');
    assert.equal(anonymous.status, 401);
    assert.equal(anonymous.body.errors?.[0]?.extensions.code, 'UNAUTHENTICATED');
    assert.equal((await post(server, '{ snapshots { id } }', { token: reader })).body.errors, undefined);
  });

  it('needs a key to subscribe (connection parameters or the explorer headers), and refuses foreign browser origins', async () => {
    const server = await serve();
    assert.equal(codeOf(await subscribeOnce(server, {})), 'UNAUTHENTICATED');
    // A bad credential in connection_init is refused before the acknowledgement.
    assert.equal(closeOf(await subscribeOnce(server, { connectionParams: { Authorization: 'Bearer cq_bogus' } })), '4401 Unauthorized: malformed API key');
    await resetKnowledge(runtime);
    await post(server, INGEST, { token: writer });
    await outcomeOf(server, '2024-01-01', writer);
    const event = (outcome: unknown) => (outcome as { data?: { changes?: { seq: number } } }).data?.changes?.seq;
    assert.equal(event(await subscribeOnce(server, { connectionParams: { Authorization: `Bearer ${reader}` } })), 1);
    assert.equal(event(await subscribeOnce(server, { extensions: { headers: { Authorization: `Bearer ${reader}` } } })), 1);
    const sameOrigin = new URL(server.url).origin;
    assert.equal(event(await subscribeOnce(server, { origin: sameOrigin, connectionParams: { Authorization: `Bearer ${reader}` } })), 1);
    const foreign = await subscribeOnce(server, { origin: 'https://evil.example', connectionParams: { Authorization: `Bearer ${reader}` } });
    assert.ok(!Array.isArray(foreign) && event(foreign) === undefined, `a foreign origin is refused: ${String(foreign)}`);
    // Refused as forbidden (403): a key would not help (it was 401).
    const upgradeStatus = await new Promise<number>((resolve) => {
      const socket = new WebSocket(server.url.replace('http', 'ws'), 'graphql-transport-ws', { origin: 'https://evil.example' });
      socket.on('unexpected-response', (_request, response) => {
        resolve(response.statusCode ?? 0);
        socket.terminate();
      });
      socket.on('open', () => {
        resolve(101);
        socket.close();
      });
      socket.on('error', () => {});
    });
    assert.equal(upgradeStatus, 403);
  });

  // Here, not in server.test.ts: this runtime has no change feed polling Neo4j, so the round-trip count is the requests' own.
  it('refuses a deeply nested query and thousands of aliases before touching the database', async () => {
    const server = await serve();
    let nested = 'value';
    for (let level = 0; level < 10; level++) nested = `article { facts { ${nested} } }`;
    await post(server, '{ __typename }', { token: reader }); // the key is looked up once, then cached
    const before = runtime.services.db.queryCount;
    const deep = (await post(server, `{ fact(subject: "A", attribute: "Leader") { ${nested} } }`, { token: reader })).body;
    assert.equal(deep.data, undefined);
    assert.match(deep.errors!.map((e) => e.message).join(' '), /depth|cost/i);
    const aliases = (await post(server, `{ ${Array.from({ length: 10_000 }, (_, i) => `s${i}: search(query: "x") { id }`).join(' ')} }`, { token: reader }))
      .body;
    assert.equal(aliases.data, undefined);
    assert.equal(aliases.errors![0]!.extensions.code, 'GRAPHQL_PARSE_FAILED', 'over 4,000 tokens: refused while parsing, as a 400');
    assert.equal(runtime.services.db.queryCount, before, 'no Cypher ran for refused queries');
  });

  it('limits requests per key and per address, with Retry-After', async () => {
    const server = await serve({ rateLimitPerMinute: 5 });
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await post(server, '{ snapshots { id } }')).status);
    assert.deepEqual(statuses, [200, 200, 200, 200, 200, 429]);
    // Another address of the same /24 is the same anonymous caller (each address had its own budget).
    assert.equal(await statusFrom(server, '127.0.0.2'), 429);
    const limited = await post(server, '{ snapshots { id } }');
    assert.equal(limited.body.errors?.[0]?.extensions.code, 'RATE_LIMITED');
    assert.ok(Number(limited.headers.get('retry-after')) >= 1);
    // A key has its own budget.
    assert.equal((await post(server, '{ snapshots { id } }', { token: reader })).status, 200);
    // Wrong keys spend the address's budget: guessing is limited too.
    const guessing = await serve({ rateLimitPerMinute: 3 });
    const guesses: number[] = [];
    for (let i = 0; i < 5; i++) guesses.push((await post(guessing, '{ snapshots { id } }', { token: `cq_${'a'.repeat(10)}_${'b'.repeat(42)}${i}` })).status);
    assert.deepEqual(guesses, [401, 401, 401, 429, 429]);
    const wsGuessing = await serve({ rateLimitPerMinute: 3 });
    const wsCloses: Array<string | undefined> = [];
    for (let i = 0; i < 5; i++)
      wsCloses.push(
        closeOf(await subscribeOnce(wsGuessing, { connectionParams: { Authorization: `Bearer cq_${'a'.repeat(10)}_${'c'.repeat(42)}${i}` } }))?.split(':')[0],
      );
    assert.deepEqual(wsCloses, ['4401 Unauthorized', '4401 Unauthorized', '4401 Unauthorized', '4429 Too many requests', '4429 Too many requests']);
  });

  it('turns off introspection and the explorer in production mode', async () => {
    const server = await serve({ mode: 'production' });
    const introspection = await post(server, '{ __schema { types { name } } }');
    assert.equal(introspection.body.data, undefined);
    assert.match(introspection.body.errors![0]!.message, /introspection/i);
    const page = await fetch(server.url, { headers: { accept: 'text/html' } });
    assert.doesNotMatch(await page.text(), /ChronoQL explorer/);
    assert.equal((await post(server, '{ snapshots { id } }')).status, 200);
  });

  it('suggests no names of the schema in production, over HTTP and WebSocket (enum values still were)', async () => {
    const production = await serve({ mode: 'production' });
    const misspelt = [
      '{ search(query: "x", mode: HYBRI) { id } }',
      '{ serch(query: "x") { id } }',
      '{ articles(frst: 1) { totalCount } }',
      'query($mode: SearchMod) { search(query: "x", mode: $mode) { id } }',
    ];
    const answers = await Promise.all(misspelt.map((query) => post(production, query)));
    answers.push(await post(production, 'query($mode: SearchMode!) { search(query: "x", mode: $mode) { id } }', { variables: { mode: 'HYBRI' } }));
    const overWebSocket = await subscribeOnce(production, {
      connectionParams: { Authorization: `Bearer ${reader}` },
      query: 'subscription { chnges(afterSeq: 0) { seq } }',
    });
    const told = [...answers.map(({ body }) => body.errors), overWebSocket];
    for (const errors of told) assert.ok(Array.isArray(errors) && errors.length > 0, JSON.stringify(errors));
    assert.doesNotMatch(JSON.stringify(told), /Did you mean/);
    // In development introspection shows the schema anyway: suggestions help there.
    const development = await post(await serve(), misspelt[0]!);
    assert.match(development.body.errors![0]!.message, /Did you mean the enum value "HYBRID"\?/);
  });

  it('cuts off a client that sends its headers too slowly', { timeout: 30_000 }, async () => {
    const server = await serve();
    const { port } = new URL(server.url);
    const socket = connect(Number(port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write('POST /graphql HTTP/1.1\r\nHost: x\r\n');
    const drip = setInterval(() => socket.write('X-Slow: 1\r\n'), 500);
    const started = performance.now();
    const answer = await new Promise<string>((resolve) => {
      let text = '';
      socket.on('data', (chunk) => {
        text += String(chunk);
        // The answer came: a header dripped after the server closed would be reset, not read.
        clearInterval(drip);
      });
      // A reset after the answer (a drip that crossed the close) ends the connection like a close; the answer is checked below.
      socket.on('error', () => undefined);
      socket.once('close', () => resolve(text));
    });
    clearInterval(drip);
    const seconds = (performance.now() - started) / 1000;
    assert.ok(seconds >= HTTP_LIMITS.headersMs / 1000 - 1 && seconds < HTTP_LIMITS.headersMs / 1000 + 3, `closed after ${seconds.toFixed(1)} s`);
    assert.match(answer, /^HTTP\/1\.1 408/);
  });

  it('logs every error a client is told about, with its code and request id: refusals at warn', async () => {
    const server = await serve();
    const before = logs.length;
    const response = await fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': 'req-refused-1' },
      body: JSON.stringify({ query: 'query Dated { fact(subject: "A", attribute: "Leader", asOf: "soon") { value } }', operationName: 'Dated' }),
    });
    const body = (await response.json()) as { errors: Array<{ message: string; extensions: { code: string } }> };
    const told = body.errors[0]!;
    const entries = logs
      .slice(before)
      .map((line) => JSON.parse(line) as Record<string, any>)
      .filter((entry) => entry.requestId === 'req-refused-1' && entry.msg === 'request refused');
    assert.equal(entries.length, 1, `logged once: ${JSON.stringify(logs.slice(before)).slice(0, 400)}`);
    assert.equal(entries[0]!.level, 40);
    assert.equal(entries[0]!.code, told.extensions.code);
    assert.equal(entries[0]!.message, told.message);

    // A 900 KB cursor was quoted back whole, to the caller and into one log line.
    const cursor = 'A'.repeat(900_000);
    const beforeCursor = logs.length;
    const { body: refused } = await post(server, 'query($after: String) { articles(after: $after) { totalCount } }', { variables: { after: cursor } });
    const message = refused.errors![0]!.message;
    assert.ok(message.length < 200, `the error quotes ${message.length} characters back`);
    assert.match(message, /^"A{48}…" \(900,000 characters\) is not a cursor of this list$/);
    const longest = Math.max(...logs.slice(beforeCursor).map((line) => line.length));
    assert.ok(longest < 2_000, `the longest log line has ${longest} characters`);
  });

  it('logs every error it masks as INTERNAL_SERVER_ERROR once, with its stack, request id, operation and path', async () => {
    const server = await serve();
    const { answering, changeFeed } = runtime.services;
    const failures = { ask: answering.ask, subscribe: changeFeed.subscribe };
    answering.ask = async () => {
      throw new TypeError('a planted failure in ask');
    };
    changeFeed.subscribe = () => {
      throw new TypeError('a planted failure in the change feed');
    };
    try {
      const before = logs.length;
      const response = await fetch(server.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-request-id': 'req-masked-1' },
        body: JSON.stringify({ query: 'query WhoLeads { first: ask(question: "Who leads?") { text } }', operationName: 'WhoLeads' }),
      });
      const body = (await response.json()) as { errors: Array<{ message: string; extensions: { code: string } }> };
      assert.equal(body.errors[0]!.extensions.code, 'INTERNAL_SERVER_ERROR');
      assert.match(body.errors[0]!.message, /the server log has the details/);
      const entries = logs
        .slice(before)
        .map((line) => JSON.parse(line) as Record<string, any>)
        .filter((entry) => entry.msg === 'internal error');
      assert.equal(entries.length, 1, 'logged exactly once');
      assert.equal(entries[0]!.level, 50);
      assert.equal(entries[0]!.requestId, 'req-masked-1');
      assert.equal(entries[0]!.operationName, 'WhoLeads');
      assert.deepEqual(entries[0]!.path, ['first']);
      assert.match(entries[0]!.err.stack, /TypeError: a planted failure in ask\n\s+at /);

      const beforeSubscription = logs.length;
      const outcome = await subscribeOnce(server, { connectionParams: { Authorization: `Bearer ${reader}` } });
      // A failure while opening the stream arrives as a result with errors, not as a protocol error.
      assert.equal(
        (outcome as { errors?: Array<{ extensions: { code: string } }> }).errors?.[0]?.extensions.code,
        'INTERNAL_SERVER_ERROR',
        JSON.stringify(outcome),
      );
      const subscriptionEntries = logs
        .slice(beforeSubscription)
        .map((line) => JSON.parse(line) as Record<string, any>)
        .filter((entry) => entry.msg === 'internal error');
      assert.equal(subscriptionEntries.length, 1);
      assert.equal(subscriptionEntries[0]!.transport, 'websocket');
      assert.ok(typeof subscriptionEntries[0]!.requestId === 'string' && subscriptionEntries[0]!.requestId.length > 0);
      assert.match(subscriptionEntries[0]!.err.stack, /a planted failure in the change feed/);
    } finally {
      answering.ask = failures.ask;
      changeFeed.subscribe = failures.subscribe;
    }
  });

  it('never writes a credential to the logs', async () => {
    assert.ok(logs.length > 0);
    const all = logs.join('\n');
    for (const token of [reader, writer, admin]) assert.ok(!all.includes(token), 'a key reached the logs');
    assert.ok(!all.includes(HS_SECRET));
    assert.match(all, /"authorization":"\[redacted\]"/);
  });
});
