/** `chronoql bench …`: speed and memory benchmarks; results go to bench/results/. */
import { Option, type Command } from 'commander';
import { printResult } from '../../src/cli/common.js';

export function addBenchCommands(program: Command): void {
  const bench = program.command('bench').description('Run a benchmark (results go to bench/results/).');
  bench
    .command('ingest')
    .description('Ingest throughput and storage growth on a synthetic corpus (uses its own data directory).')
    .addOption(new Option('--articles <n>', 'articles').default(10000).argParser(Number))
    .addOption(new Option('--change-rate <r>', 'share of sentences changed in the second snapshot').default(0.02).argParser(Number))
    .option('--json', 'print JSON')
    .action(async (options: { articles: number; changeRate: number; json?: boolean }) => {
      const { runIngestBenchmark } = await import('../../bench/ingest.js');
      const result = await runIngestBenchmark(options);
      printResult(result, options.json);
    });
  bench
    .command('benchmark-maintenance')
    .description('What keeping the living benchmark costs after each ingest, as a share of the ingest, on a synthetic corpus (uses its own data directory).')
    .addOption(new Option('--articles <n>', 'articles').default(10000).argParser(Number))
    .addOption(new Option('--change-rate <r>', 'share of sentences whose year changes in the second snapshot').default(0.02).argParser(Number))
    .option('--json', 'print JSON')
    .action(async (options: { articles: number; changeRate: number; json?: boolean }) => {
      const { runBenchmarkMaintenanceBenchmark } = await import('../../bench/benchmarkMaintenance.js');
      printResult(await runBenchmarkMaintenanceBenchmark(options), options.json);
    });
  bench
    .command('fact-history')
    .description('p50/p99 latency of the factHistory query over HTTP on the demo corpus.')
    .addOption(new Option('--requests <n>', 'requests to time').default(2000).argParser(Number))
    .option('--json', 'print JSON')
    .action(async (options: { requests: number; json?: boolean }) => {
      const { runFactHistoryBenchmark } = await import('../../bench/factHistory.js');
      const result = await runFactHistoryBenchmark(options);
      printResult(result, options.json);
    });

  bench
    .command('replay')
    .description('Events per second a subscriber resuming with afterSeq: 0 receives over WebSocket, on a synthetic change history.')
    .addOption(new Option('--events <n>', 'change events in the history').default(12000).argParser(Number))
    .option('--json', 'print JSON')
    .action(async (options: { events: number; json?: boolean }) => {
      const { runReplayBenchmark } = await import('../../bench/replay.js');
      printResult(await runReplayBenchmark(options), options.json);
    });

  bench
    .command('search')
    .description('Native batched time-filtered search vs the TypeScript reference and the GEMM roofline (synthetic vectors).')
    .addOption(new Option('--n <rows>', 'rows in the index').default(100_000).argParser(Number))
    .addOption(new Option('--d <dim>', 'dimension').default(384).argParser(Number))
    .addOption(new Option('--q <sizes>', 'query batch size(s), comma-separated').default('64'))
    .addOption(new Option('--k <k>', 'results per query').default(10).argParser(Number))
    .addOption(new Option('--device <device>', 'cpu or cuda').choices(['cpu', 'cuda']).default('cpu'))
    .addOption(new Option('--repeats <n>', 'timed repeats (best is kept)').default(3).argParser(Number))
    .option('--json', 'print one JSON object')
    .option('--write', 'run the committed matrix and write bench/results/search-<device>.{md,json}')
    .action(async (options: { n: number; d: number; q: string; k: number; device: 'cpu' | 'cuda'; repeats: number; json?: boolean; write?: boolean }) => {
      const { searchBenchmarkCommand } = await import('../../bench/search.js');
      await searchBenchmarkCommand({ ...options, q: options.q.split(',').map(Number), json: Boolean(options.json), write: Boolean(options.write) });
    });
  bench
    .command('retrieval')
    .description('search latency (p50/p99 over HTTP) and embedding throughput on a synthetic corpus of --passages passages.')
    .addOption(new Option('--passages <n>', 'passages in the corpus').default(100_000).argParser(Number))
    .addOption(new Option('--requests <n>', 'timed requests per mode').default(300).argParser(Number))
    .option('--json', 'print JSON')
    .action(async (options: { passages: number; requests: number; json?: boolean }) => {
      const { runRetrievalLatencyBenchmark } = await import('../../bench/retrievalLatency.js');
      const result = await runRetrievalLatencyBenchmark(options);
      printResult(result, options.json);
    });
  bench
    .command('load')
    .description(
      "Mixed traffic (70% reads, 20% ask, 10% history) at the highest concurrency with p99 under 200 ms, a soak with the server's memory, and a burst of change events to many subscribers; the server runs as its own process.",
    )
    .option('--seconds <n>', 'length of the main run', '60')
    .option('--soak-seconds <n>', 'length of the soak', '120')
    .option('--connections <n>', 'skip the sweep and use this concurrency')
    .option('--subscribers <n>', 'live subscribers during the burst', '100')
    .option('--events <n>', 'change events in the burst', '10000')
    .action(async (options: { seconds: string; soakSeconds: string; connections?: string; subscribers: string; events: string }) => {
      const { runLoadBenchmark } = await import('../../bench/load.js');
      printResult(
        await runLoadBenchmark({
          seconds: Number(options.seconds),
          soakSeconds: Number(options.soakSeconds),
          connections: options.connections === undefined ? undefined : Number(options.connections),
          subscribers: Number(options.subscribers),
          events: Number(options.events),
        }),
        false,
      );
    });

  bench
    .command('replicas')
    .description('The load mix at one concurrency against one server, then spread over two replicas on the same Neo4j: requests/s and p99 of each.')
    .option('--seconds <n>', 'length of each run', (v) => Number.parseInt(v, 10), 60)
    .option('--connections <n>', 'total concurrent connections', (v) => Number.parseInt(v, 10), 8)
    .action(async (options: { seconds: number; connections: number }) => {
      const { runReplicasBenchmark } = await import('../../bench/replicas.js');
      printResult(await runReplicasBenchmark(options), false);
    });
  bench
    .command('under-attack')
    .description(
      "A keyed client's fact reads (p50/p99, errors) while anonymous clients loop the list fan-out and the pool-starving batch bodies, and while two loop the largest body the limits allow.",
    )
    .option('--seconds <n>', 'length of each attacked phase', (v) => Number.parseInt(v, 10), 60)
    .action(async (options: { seconds: number }) => {
      const { runUnderAttackBenchmark } = await import('../../bench/underAttack.js');
      printResult(await runUnderAttackBenchmark(options), false);
    });
  bench
    .command('ask')
    .description('`ask` p50/p99 per retrieval mode (single requests over HTTP) and `batchAsk` questions/s, with the time share per stage.')
    .addOption(
      new Option('--corpus <corpus>', 'the demo corpus, or the demo plus a synthetic corpus of recombined demo sentences')
        .choices(['demo', 'synthetic'])
        .default('demo'),
    )
    .option('--passages <n>', 'synthetic passages', (v) => Number.parseInt(v, 10), 100_000)
    .option('--requests <n>', 'timed requests per mode', (v) => Number.parseInt(v, 10), 500)
    .option('--json', 'print JSON')
    .action(async (options: { corpus: 'demo' | 'synthetic'; passages: number; requests: number; json?: boolean }) => {
      const { runAskBenchmark } = await import('../../bench/ask.js');
      printResult(await runAskBenchmark(options), options.json);
    });
  bench
    .command('mcp-ask')
    .description('`ask` p50/p99 through GraphQL, MCP over Streamable HTTP and MCP over stdio (`chronoql mcp`), side by side, on the demo corpus.')
    .option('--requests <n>', 'timed requests per transport', (v) => Number.parseInt(v, 10), 300)
    .option('--json', 'print JSON')
    .action(async (options: { requests: number; json?: boolean }) => {
      const { runMcpAskBenchmark } = await import('../../bench/mcpAsk.js');
      printResult(await runMcpAskBenchmark(options), options.json);
    });
  bench
    .command('labeling')
    .description('Sentence labeling throughput (exact match vs GrowOVER) on the synthetic corpus and the demo corpus, with the encoder and classifier shares.')
    .option('--articles <n>', 'synthetic articles (20 sentences each)', (v) => Number.parseInt(v, 10), 2000)
    .option('--change-rate <r>', 'share of sentences changed', Number.parseFloat, 0.1)
    .option('--json', 'print JSON')
    .action(async (options: { articles: number; changeRate: number; json?: boolean }) => {
      const { runLabelingBenchmark } = await import('../../bench/labeling.js');
      printResult(await runLabelingBenchmark(options), options.json);
    });
  bench
    .command('fusion')
    .description('Choose the hybrid fusion on one half of a QA set (split by article, contexts as corpus) and report it on the other half.')
    .requiredOption('--qa <file>', 'QA file with contexts (e.g. a SQuAD subset)')
    .option('--json', 'print JSON')
    .action(async (options: { qa: string; json?: boolean }) => {
      const { runFusionTuning } = await import('../../bench/fusionTuning.js');
      printResult(await runFusionTuning(options), options.json);
    });
  bench
    .command('retrieval-eval')
    .description('Recall@1/5/20 and MRR@20 per search mode on the demo corpus (fact questions and data/eval/paraphrase-qa.jsonl).')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      const { runRetrievalEvaluation } = await import('../../bench/retrievalEval.js');
      const result = await runRetrievalEvaluation();
      printResult(result, options.json);
    });
}
