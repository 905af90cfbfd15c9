// Who may hold a WebSocket, how many, and for how long: a credential within seconds (issue 21,
// case 3), caps at the upgrade, dead sockets dropped, and a subscription that ends when its key is
// revoked or its token expires (case 7).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SignJWT } from 'jose';
import WebSocket from 'ws';
import { createApiKey, Role } from '../../src/api/auth.js';
import { startServer, type RunningServer, type ServerOptions } from '../../src/api/server.js';
import { DEFAULT_SUBSCRIPTION_SETTINGS, UNAUTHORIZED_CLOSE_CODE, type SubscriptionSettings } from '../../src/api/subscriptionServer.js';
import { loadConfig } from '../../src/app/config.js';
import type { Runtime } from '../../src/app/runtime.js';
import { ApiKeyRepository } from '../../src/graph/apiKeyRepository.js';
import { createLogger } from '../../src/platform/logger.js';
import { article, day, openTestRuntime, resetKnowledge } from '../support/runtime.js';

const HS_SECRET = 'a-test-secret-that-is-long-enough-for-hs256';
const ISSUER = 'https://issuer.test';
const AUDIENCE = 'chronoql-test';

interface Peer {
  socket: WebSocket;
  /** Messages received, parsed. */
  messages: Array<{ type: string; id?: string; payload?: any }>;
  closed: Promise<{ code: number; reason: string }>;
}

/** A raw graphql-transport-ws socket, open; `init` sends connection_init with that payload. */
async function connect(server: RunningServer, init?: Record<string, unknown>): Promise<Peer> {
  const socket = new WebSocket(server.url.replace('http', 'ws'), 'graphql-transport-ws');
  const messages: Peer['messages'] = [];
  socket.on('message', (data) => messages.push(JSON.parse(String(data))));
  const closed = new Promise<{ code: number; reason: string }>((resolve) => socket.on('close', (code, reason) => resolve({ code, reason: String(reason) })));
  await new Promise((resolve, reject) => (socket.once('open', resolve), socket.once('error', reject)));
  if (init) socket.send(JSON.stringify({ type: 'connection_init', payload: init }));
  return { socket, messages, closed };
}

/** How the socket was closed, or `open` when it still is after `ms`. */
async function closedWithin(peer: Peer, ms: number): Promise<{ code: number; reason: string } | 'open'> {
  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([peer.closed, new Promise<'open'>((resolve) => (timer = setTimeout(() => resolve('open'), ms)))]);
  clearTimeout(timer);
  if (outcome === 'open') peer.socket.terminate();
  return outcome;
}

/** The HTTP status an upgrade gets (101 when it is accepted, then closed again), from `localAddress`, with `token` in its headers. */
function upgradeStatus(server: RunningServer, options: { token?: string; localAddress?: string } = {}): Promise<{ status: number; socket?: WebSocket }> {
  return new Promise((resolve) => {
    const headers = options.token ? { authorization: `Bearer ${options.token}` } : undefined;
    const socket = new WebSocket(server.url.replace('http', 'ws'), 'graphql-transport-ws', { headers, localAddress: options.localAddress });
    socket.on('unexpected-response', (_request, response) => {
      resolve({ status: response.statusCode ?? 0 });
      socket.terminate();
    });
    socket.on('open', () => resolve({ status: 101, socket }));
    socket.on('error', () => {});
  });
}

const until = async (condition: () => boolean, ms: number): Promise<boolean> => {
  const deadline = Date.now() + ms;
  while (!condition() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  return condition();
};

describe('WebSocket connections', () => {
  let runtime: Runtime;
  let reader: string;
  const servers: RunningServer[] = [];

  async function serve(subscriptions: Partial<SubscriptionSettings> = {}, overrides: Partial<ServerOptions> = {}): Promise<RunningServer> {
    const server = await startServer(runtime, {
      ...loadConfig({}),
      port: 0,
      host: '127.0.0.1',
      log: createLogger('silent'),
      ...overrides,
      subscriptions: { ...DEFAULT_SUBSCRIPTION_SETTINGS, ...subscriptions },
    });
    servers.push(server);
    return server;
  }

  before(async () => {
    runtime = await openTestRuntime({ changeFeed: true });
    await resetKnowledge(runtime);
    reader = (await createApiKey(runtime.services.db, 'websocket reader', Role.READER)).token;
  });
  after(async () => {
    for (const server of servers) await server.close();
    await runtime.close();
  });

  it('closes a connection that shows no credential within the init timeout (4401), and refuses a bad one before the ack', async () => {
    const server = await serve({ initTimeoutMs: 500 });
    const anonymous = await connect(server, {});
    // Acknowledged (the explorer sends its key with each subscription), but only for the init timeout.
    assert.equal(await until(() => anonymous.messages.some((message) => message.type === 'connection_ack'), 2_000), true);
    const outcome = await closedWithin(anonymous, 5_000);
    assert.notEqual(outcome, 'open', 'an anonymous connection that never subscribes is closed');
    assert.equal((outcome as { code: number }).code, UNAUTHORIZED_CLOSE_CODE);
    assert.match((outcome as { reason: string }).reason, /^Unauthorized: no credential/);
    // One that never sends connection_init is closed the same way (README said 4408, graphql-ws's own code).
    const silent = await closedWithin(await connect(server), 5_000);
    assert.equal((silent as { code: number }).code, UNAUTHORIZED_CLOSE_CODE);

    const bogus = await connect(server, { Authorization: 'Bearer cq_bogus' });
    const refused = await closedWithin(bogus, 5_000);
    assert.deepEqual(refused, { code: UNAUTHORIZED_CLOSE_CODE, reason: 'Unauthorized: malformed API key' });
    assert.deepEqual(bogus.messages, [], 'no connection_ack for a bad credential');

    const keyed = await connect(server, { Authorization: `Bearer ${reader}` });
    assert.equal(await closedWithin(keyed, 1_500), 'open', 'a connection with a valid key stays open');
  });

  it('caps connections per client address (429) and in total (503) at the upgrade, and frees a slot when one closes', async () => {
    const perAddress = await serve({ maxConnectionsPerAddress: 3 });
    const open: WebSocket[] = [];
    for (let i = 0; i < 3; i++) {
      const { status, socket } = await upgradeStatus(perAddress);
      assert.equal(status, 101);
      open.push(socket!);
    }
    assert.equal((await upgradeStatus(perAddress)).status, 429);
    const leaving = open.pop()!;
    await new Promise((resolve) => (leaving.once('close', resolve), leaving.close()));
    await new Promise((resolve) => setTimeout(resolve, 200)); // the server's side of the close
    const again = await upgradeStatus(perAddress);
    assert.equal(again.status, 101);
    open.push(again.socket!);

    const total = await serve({ maxConnections: 2 });
    for (let i = 0; i < 2; i++) open.push((await upgradeStatus(total, { token: reader })).socket!);
    assert.equal((await upgradeStatus(total, { token: reader })).status, 503);
    for (const socket of open) socket.terminate();
  });

  it('keeps places for connections that show a credential: sockets that never do hold at most a quarter, eight per address', async () => {
    const server = await serve({ maxConnections: 64 });
    const squatters: WebSocket[] = [];
    // Keyless sockets from two addresses of other prefixes, as a squatter reconnecting them would hold them.
    for (const localAddress of ['127.0.1.1', '127.0.2.1']) {
      for (let i = 0; i < 8; i++) {
        const { status, socket } = await upgradeStatus(server, { localAddress });
        assert.equal(status, 101);
        squatters.push(socket!);
      }
      assert.equal((await upgradeStatus(server, { localAddress })).status, 429, 'a ninth keyless socket from one address');
    }
    assert.equal((await upgradeStatus(server, { localAddress: '127.0.3.1' })).status, 503, '16 of 64 places are for sockets without a credential yet');
    const keyed = await upgradeStatus(server, { token: reader, localAddress: '127.0.3.1' });
    assert.equal(keyed.status, 101, 'a credential with the upgrade still gets in');
    for (const socket of [...squatters, keyed.socket!]) socket.terminate();
  });

  it('holds queries over WebSocket to the same response budget and wall time as over HTTP', async () => {
    await runtime.services.ingest.ingest([article('Budget', Array.from({ length: 40 }, (_, i) => `Budget sentence ${i}.`).join(' '))], {
      takenAt: day('2023-06-01'),
      source: 'test',
    });
    const small = await serve({}, { limits: { maxResponseFields: 30 } });
    const peer = await connect(small, { Authorization: `Bearer ${reader}` });
    await until(() => peer.messages.some((message) => message.type === 'connection_ack'), 5_000);
    peer.socket.send(JSON.stringify({ id: 'q', type: 'subscribe', payload: { query: '{ article(id: "Budget") { sentences { text } } }' } }));
    assert.equal(await until(() => peer.messages.some((message) => message.type === 'complete'), 10_000), true, JSON.stringify(peer.messages));
    const answer = peer.messages.find((message) => message.type === 'next')!;
    assert.equal(answer.payload.data, null);
    assert.deepEqual(
      answer.payload.errors.map((error: { extensions: { code: string } }) => error.extensions.code),
      ['RESPONSE_TOO_LARGE'],
    );
    peer.socket.terminate();

    const hurried = await serve({}, { limits: { requestBudgetMs: 0 } });
    const late = await connect(hurried, { Authorization: `Bearer ${reader}` });
    await until(() => late.messages.some((message) => message.type === 'connection_ack'), 5_000);
    late.socket.send(
      JSON.stringify({ id: 'q', type: 'subscribe', payload: { query: '{ batchSearch(queries: ["budget", "sentence"], mode: LEXICAL) { id } }' } }),
    );
    assert.equal(await until(() => late.messages.some((message) => message.type === 'complete'), 10_000), true, JSON.stringify(late.messages));
    assert.deepEqual(
      late.messages.find((message) => message.type === 'next')!.payload.errors.map((error: { extensions: { code: string } }) => error.extensions.code),
      ['QUERY_TIMEOUT'],
    );
    late.socket.terminate();
  });

  it('caps the operations open at once on one connection and for one caller', async () => {
    const server = await serve({ maxOperationsPerConnection: 3, maxOperationsPerCaller: 5 });
    const { token } = await createApiKey(runtime.services.db, 'many subscriptions', Role.READER);
    const subscribe = async (peer: Peer, ids: string[]) => {
      await until(() => peer.messages.some((message) => message.type === 'connection_ack'), 5_000);
      for (const id of ids) peer.socket.send(JSON.stringify({ id, type: 'subscribe', payload: { query: 'subscription { changes { seq } }' } }));
      await until(() => peer.messages.filter((message) => message.type === 'error').length >= 1, 2_000);
      return peer.messages.filter((message) => message.type === 'error').map((message) => [message.id, message.payload[0].extensions.code]);
    };
    const first = await connect(server, { Authorization: `Bearer ${token}` });
    assert.deepEqual(await subscribe(first, ['a', 'b', 'c', 'd']), [['d', 'TOO_MANY_OPERATIONS']]);
    const second = await connect(server, { Authorization: `Bearer ${token}` });
    assert.deepEqual(await subscribe(second, ['e', 'f', 'g']), [['g', 'TOO_MANY_OPERATIONS']], 'five for the caller on all its connections');
    first.socket.send(JSON.stringify({ id: 'a', type: 'complete' }));
    await until(() => false, 300);
    second.messages.length = 0;
    assert.deepEqual(await subscribe(second, ['h']), [], 'a completed one frees its place');
    for (const peer of [first, second]) peer.socket.terminate();
  });

  it('drops a socket that stops answering pings', async () => {
    const server = await serve({ keepAliveMs: 300 });
    const socket = new WebSocket(server.url.replace('http', 'ws'), 'graphql-transport-ws', { autoPong: false });
    const closed = new Promise<number>((resolve) => socket.on('close', (code) => resolve(code)));
    await new Promise((resolve) => socket.once('open', resolve));
    socket.send(JSON.stringify({ type: 'connection_init', payload: { Authorization: `Bearer ${reader}` } }));
    const code = await Promise.race([closed, new Promise((resolve) => setTimeout(() => resolve('open'), 5_000))]);
    assert.equal(code, 1006, 'terminated, without a close handshake');
  });

  /** Subscribes on `peer` and resolves once the first change arrives. */
  async function subscribed(peer: Peer): Promise<void> {
    await until(() => peer.messages.some((message) => message.type === 'connection_ack'), 5_000);
    peer.socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: 'subscription { changes(afterSeq: 0) { seq } }' } }));
    assert.equal(await until(() => peer.messages.some((message) => message.type === 'next'), 10_000), true, JSON.stringify(peer.messages));
  }

  it('ends a subscription whose API key is revoked, with 4401 "credential revoked"', async () => {
    await runtime.services.ingest.ingest([article('A', 'One.')], { takenAt: day('2024-01-01'), source: 'test' });
    const server = await serve({ credentialRecheckMs: 500 });
    const { key, token } = await createApiKey(runtime.services.db, 'soon revoked', Role.READER);
    const peer = await connect(server, { Authorization: `Bearer ${token}` });
    await subscribed(peer);
    await new ApiKeyRepository(runtime.services.db).revoke(key.id); // what `chronoql keys revoke` does
    // Within the recheck and the key cache's 5 s.
    const outcome = await closedWithin(peer, 15_000);
    assert.deepEqual(outcome, { code: UNAUTHORIZED_CLOSE_CODE, reason: 'Unauthorized: credential revoked' });
  });

  it('ends a subscription when its token expires, with 4401 "token expired"', async () => {
    const server = await serve(
      {},
      { access: { readAccess: 'public', jwt: { algorithm: 'HS256', key: HS_SECRET, issuer: ISSUER, audience: AUDIENCE, roleClaim: 'role' } } },
    );
    const expiresAt = Math.floor(Date.now() / 1000) + 4;
    const token = await new SignJWT({ role: 'reader' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('carol')
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setExpirationTime(expiresAt)
      .sign(new TextEncoder().encode(HS_SECRET));
    const peer = await connect(server, { Authorization: `Bearer ${token}` });
    await subscribed(peer);
    const outcome = await closedWithin(peer, 15_000);
    assert.deepEqual(outcome, { code: UNAUTHORIZED_CLOSE_CODE, reason: 'Unauthorized: token expired' });
    assert.ok(Date.now() >= expiresAt * 1000 - 50, 'not before the expiry');
  });

  it('keeps a subscription past the wall time of one operation: each event gets its own', async () => {
    const server = await serve({}, { limits: { requestBudgetMs: 300 } });
    const peer = await connect(server, { Authorization: `Bearer ${reader}` });
    await until(() => peer.messages.some((message) => message.type === 'connection_ack'), 5_000);
    peer.socket.send(JSON.stringify({ id: 's', type: 'subscribe', payload: { query: 'subscription { changes { seq article { title } } }' } }));
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await runtime.services.ingest.ingest([article('Later', 'It came later.')], { takenAt: day('2024-06-01'), source: 'test' });
    assert.equal(await until(() => peer.messages.some((message) => message.type === 'next'), 10_000), true, JSON.stringify(peer.messages));
    const event = peer.messages.find((message) => message.type === 'next')!;
    assert.equal(event.payload.errors, undefined, JSON.stringify(event.payload.errors));
    assert.equal(event.payload.data.changes.article.title, 'Later');
    peer.socket.terminate();
  });
});
