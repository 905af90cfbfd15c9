/** `chronoql eval`: the living benchmark (or a QA file) answered per mode and snapshot, with tables, JSON and a report. */
import type { Command } from 'commander';
import { cliConfig, withProgress, withRuntime, writeJson } from '../../src/cli/common.js';
import type { BenchmarkKind } from '../../src/domain/model.js';
import { isoDay } from '../../src/domain/time.js';
import { exportLines } from '../../src/benchmarks/benchmarkFiles.js';
import type { Runtime } from '../../src/app/runtime.js';
import type { TimedItem } from '../overTime/evaluateOverTime.js';
import type { BenchmarkSize } from '../overTime/result.js';

const STORE_KINDS: BenchmarkKind[] = ['TEXT_QA', 'FACT_QA', 'DIALOGUE_TURN'];

/** The benchmark as of each complete snapshot, and its sizes (GrowOVER's Table 13). */
async function storeItems(runtime: Runtime): Promise<{ items: TimedItem[]; snapshots: string[]; sizes: BenchmarkSize[] }> {
  const repository = runtime.services.benchmarkItems;
  const snapshots = await repository.snapshots();
  const unmaintained = snapshots.filter((snapshot) => !snapshot.maintained).map((snapshot) => snapshot.id);
  if (unmaintained.length > 0)
    throw new RangeError(`the benchmark of ${unmaintained.join(', ')} is not maintained yet: run \`chronoql benchmark build\` first`);
  const items: TimedItem[] = [];
  for (const snapshot of snapshots) {
    for (const line of await exportLines(repository, { asOf: snapshot.takenAt, kinds: STORE_KINDS, types: null })) {
      items.push({
        question: line.question,
        answers: line.answers,
        previousAnswers: line.previousAnswers,
        context: line.context.filter((entry): entry is string => typeof entry === 'string'),
        documents: [],
        asOf: snapshot.takenAt,
        type: line.type,
        kind: line.kind,
        evidence: line.evidence,
        ...(line.dialogueId !== undefined ? { dialogue: { id: line.dialogueId, turn: line.turn ?? 0 } } : {}),
        snapshot: isoDay(snapshot.takenAt),
      });
    }
  }
  const sizes = (await repository.sizes())
    .filter((row) => STORE_KINDS.includes(row.kind))
    .map((row) => ({ snapshot: isoDay(row.takenAt), kind: row.kind, type: row.type, count: row.count }));
  return { items, snapshots: snapshots.map((snapshot) => isoDay(snapshot.takenAt)), sizes };
}

export function addOverTimeCommand(program: Command): void {
  program
    .command('eval')
    .description(
      "Answer the living benchmark as of each snapshot (or a QA file) through batchAsk in each mode: EM / F1 / match, evidence hit rate, decision accuracy, adopted vs not-adopted F1 and dialogue BLEU, per mode × snapshot × type (GrowOVER's Table 4).",
    )
    .option('--qa <file>', 'a QA file instead of the stored benchmark (its asOf dates are the snapshots)')
    .option('--modes <list>', 'retrieval modes, comma-separated (NEVER with ADAPTIVE gives the decision accuracy)', 'NEVER,ALWAYS,GATED,ADAPTIVE')
    .option('--out <file>', 'JSON result file')
    .option('--report <dir>', "write SVG charts and an HTML page there, and publish them at the server's /reports")
    .action(async (options: { qa?: string; modes: string; out?: string; report?: string }) => {
      const { parseRetrievalModes } = await import('../answerEvaluation.js');
      const modes = parseRetrievalModes(options.modes);
      const { evaluateOverTime, sizesOf } = await import('../overTime/evaluateOverTime.js');
      const { sizesMarkdown, table4Markdown } = await import('../overTime/table.js');
      const result = await withRuntime(async (runtime) => {
        let source = 'store';
        let chosen: { items: TimedItem[]; snapshots: string[]; sizes: BenchmarkSize[] };
        if (options.qa) {
          const { readQaFile } = await import('../qaFile.js');
          source = options.qa;
          const items = (await readQaFile(options.qa)).map((item) => ({ ...item, snapshot: item.asOf ? isoDay(item.asOf) : 'file' }));
          chosen = { items, snapshots: [...new Set(items.map((item) => item.snapshot))].sort(), sizes: sizesOf(items) };
        } else {
          chosen = await storeItems(runtime);
          if (chosen.items.length === 0)
            throw new RangeError('the store holds no benchmark items: ingest a snapshot (or run `chronoql benchmark build`) first');
        }
        return withProgress('batches', (update) =>
          evaluateOverTime(runtime.services.answering, chosen.items, { modes, snapshots: chosen.snapshots, sizes: chosen.sizes, source, onProgress: update }),
        );
      });
      process.stdout.write(`${table4Markdown(result)}\n\n${sizesMarkdown(result)}\n`);
      if (options.out) await writeJson(options.out, result);
      if (options.report) {
        const { publishReport, writeReport } = await import('../overTime/reportPage.js');
        await writeReport(result, options.report);
        await publishReport(options.report, cliConfig().reportsDir);
        process.stdout.write(`report → ${options.report} (published to ${cliConfig().reportsDir}, served at /reports)\n`);
      }
    });
}
