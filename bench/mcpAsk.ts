/**
 * `ask` through MCP and through GraphQL, side by side, on the demo corpus. Every transport sends
 * the same operation (the MCP tool's own) with the same questions at their dates, one request at
 * a time, taking turns question by question so that a change of load on the machine falls on all
 * of them. GraphQL and MCP's Streamable HTTP go to one server in this process (MCP through the
 * SDK's client, which has listed the tools and so checks each result against its schema, as an
 * agent's does); MCP over stdio goes to `chronoql mcp`, a process of its own, as a client starts it.
 */
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { TOOLS } from '../src/api/mcp/tools.js';
import { startServer } from '../src/api/server.js';
import { loadConfig } from '../src/app/config.js';
import { generateQuestions } from '../src/benchmarks/questionGeneration.js';
import { AnsweringRepository } from '../src/graph/answeringRepository.js';
import { countNodes } from '../src/graph/maintenance.js';
import { SnapshotRepository } from '../src/graph/snapshotRepository.js';
import { demoSnapshots } from '../src/ingest/demoCorpus.js';
import { readSnapshotFile } from '../src/ingest/snapshotReader.js';
import { createLogger } from '../src/platform/logger.js';
import { projectRoot } from '../src/platform/paths.js';
import { machine, openBenchRuntime, percentile, writeResult } from './common.js';

/** Budgets no benchmark run reaches: what is measured is the work, not a refusal. */
const UNLIMITED = { rateLimitPerMinute: 10_000_000, costPerMinute: 1_000_000_000 };
const TRANSPORTS = ['graphql', 'mcpHttp', 'mcpStdio'] as const;
type TransportName = (typeof TRANSPORTS)[number];

interface Answer {
  text: string | null;
}

function summary(latencies: number[]): { p50Ms: number; p99Ms: number; meanMs: number } {
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    p50Ms: Number(percentile(sorted, 50).toFixed(2)),
    p99Ms: Number(percentile(sorted, 99).toFixed(2)),
    meanMs: Number((sorted.reduce((sum, ms) => sum + ms, 0) / sorted.length).toFixed(2)),
  };
}

const load = (): number[] => loadavg().map((value) => Number(value.toFixed(2)));

export async function runMcpAskBenchmark(options: { requests: number }): Promise<Record<string, unknown>> {
  const runtime = await openBenchRuntime();
  const server = await startServer(runtime, { ...loadConfig(), ...UNLIMITED, port: 0, host: '127.0.0.1', log: createLogger('warn') });
  const clients: Client[] = [];
  try {
    for (const snapshot of await demoSnapshots()) {
      await runtime.services.ingest.ingest(await readSnapshotFile(snapshot.file), { takenAt: snapshot.takenAt, source: snapshot.source });
    }
    await runtime.services.retrieval.catchUp();
    const generated = await generateQuestions(new AnsweringRepository(runtime.services.db), await new SnapshotRepository(runtime.services.db).list());
    const questions = generated.map((item) => ({ question: item.question, asOf: item.asOf }));
    const operation = TOOLS.find((tool) => tool.name === 'ask')!.operation;

    const http = new Client({ name: 'bench', version: '1' });
    await http.connect(new StreamableHTTPClientTransport(new URL(server.mcpUrl)));
    const environment = Object.fromEntries(Object.entries(process.env).filter((entry): entry is [string, string] => entry[1] !== undefined));
    const stdio = new Client({ name: 'bench', version: '1' });
    await stdio.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [join(projectRoot(), 'bin', 'chronoql.js'), 'mcp'],
        env: {
          ...environment,
          CHRONOQL_DATA_DIR: join(projectRoot(), '.chronoql-bench'),
          NEO4J_URI: '',
          CHRONOQL_BENCHMARK: 'off',
          CHRONOQL_RATE_LIMIT: String(UNLIMITED.rateLimitPerMinute),
          CHRONOQL_COST_BUDGET: String(UNLIMITED.costPerMinute),
          LOG_LEVEL: 'warn',
        },
      }),
    );
    clients.push(http, stdio);
    for (const client of clients) await client.listTools();

    const viaMcp =
      (client: Client) =>
      async (variables: Record<string, string>): Promise<Answer> => {
        const result = (await client.callTool({ name: 'ask', arguments: variables })) as CallToolResult;
        if (result.isError) throw new Error(`ask failed over MCP: ${JSON.stringify(result.content)}`);
        return (result.structuredContent as { answer: Answer }).answer;
      };
    const ask: Record<TransportName, (variables: Record<string, string>) => Promise<Answer>> = {
      graphql: async (variables) => {
        const response = await fetch(server.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ query: operation, variables }),
        });
        const body = (await response.json()) as { data?: { answer: Answer }; errors?: unknown };
        if (body.errors) throw new Error(`ask failed over GraphQL: ${JSON.stringify(body.errors)}`);
        return body.data!.answer;
      },
      mcpHttp: viaMcp(http),
      mcpStdio: viaMcp(stdio),
    };
    const pick = (i: number) => questions[(i * 7919) % questions.length]!;
    // Every passage the timed requests read has been read once by each process (a first read is the reader's cold cost, bench ask).
    for (let i = 0; i < options.requests; i++) {
      await ask.graphql(pick(i));
      await ask.mcpStdio(pick(i));
    }
    const loadBefore = load();
    const latencies: Record<TransportName, number[]> = { graphql: [], mcpHttp: [], mcpStdio: [] };
    let disagreements = 0;
    for (let i = 0; i < options.requests; i++) {
      const texts = new Set<string | null>();
      for (let turn = 0; turn < TRANSPORTS.length; turn++) {
        const transport = TRANSPORTS[(i + turn) % TRANSPORTS.length]!;
        const started = performance.now();
        const answer = await ask[transport](pick(i));
        latencies[transport].push(performance.now() - started);
        texts.add(answer.text);
      }
      if (texts.size > 1) disagreements++;
    }
    const result = {
      benchmark: 'mcp-ask',
      machine: machine(),
      loadAverage: { note: '1, 5 and 15 minute load averages of the shared machine, before and after the timed requests', before: loadBefore, after: load() },
      passages: await countNodes(runtime.services.db, 'Passage'),
      questions: questions.length,
      requestsPerTransport: options.requests,
      operation: 'the ask tool’s GraphQL operation, retrieval ADAPTIVE (the default)',
      latency: Object.fromEntries(TRANSPORTS.map((transport) => [transport, summary(latencies[transport])])),
      answersThatDifferBetweenTransports: disagreements,
    };
    await writeResult('mcp-ask', result);
    return result;
  } finally {
    for (const client of clients) await client.close();
    await server.close();
    await runtime.close();
  }
}
