/** Living benchmarks kept in the store: build, export, import; and the older fact-question file. */
import { readFile, writeFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { Option, type Command } from 'commander';
import { parseDateInput } from '../domain/time.js';
import type { BenchmarkItemType, BenchmarkKind } from '../domain/model.js';
import { importItems, exportLines } from '../benchmarks/benchmarkFiles.js';
import type { ImportShape } from '../benchmarks/importShapes.js';
import { withRuntime } from './common.js';

const KINDS: readonly BenchmarkKind[] = ['TEXT_QA', 'FACT_QA', 'DIALOGUE_TURN', 'IMPORTED'];
const TYPES: readonly BenchmarkItemType[] = ['NEW', 'CHANGED', 'UNCHANGED'];
const IMPORT_SHAPES: readonly ImportShape[] = ['squad', 'retrievalqa', 'dynaquest'];

function listOption<T extends string>(value: string | undefined, allowed: readonly T[], name: string): T[] | null {
  if (value === undefined) return null;
  const values = value.split(',').map((part) => part.trim().toUpperCase());
  const wrong = values.filter((part) => !allowed.includes(part as T));
  if (wrong.length > 0) throw new RangeError(`${name} takes ${allowed.join(', ')}; got ${wrong.join(', ')}`);
  return values as T[];
}

export function addBenchmarkCommands(program: Command): void {
  program
    .command('questions')
    .description('Generate typed QA items (NEW / CHANGED / UNCHANGED) from the facts of every snapshot after the first, as JSON Lines.')
    .option('--as-of <date>', 'only the latest snapshot taken at or before this date')
    .requiredOption('--out <file>', 'JSON Lines file to write')
    .action(async (options: { asOf?: string; out: string }) => {
      const asOf = options.asOf ? parseDateInput(options.asOf, '--as-of') : undefined;
      const { generateQuestions } = await import('../benchmarks/questionGeneration.js');
      const { AnsweringRepository } = await import('../graph/answeringRepository.js');
      const { SnapshotRepository } = await import('../graph/snapshotRepository.js');
      await withRuntime(async (runtime) => {
        const db = runtime.services.db;
        const items = await generateQuestions(new AnsweringRepository(db), await new SnapshotRepository(db).list(), asOf);
        await writeFile(options.out, items.map((item) => JSON.stringify(item)).join('\n') + (items.length > 0 ? '\n' : ''));
        const count = (type: string): number => items.filter((item) => item.type === type).length;
        process.stdout.write(
          `${items.length} questions (${count('CHANGED')} CHANGED, ${count('NEW')} NEW, ${count('UNCHANGED')} UNCHANGED) → ${options.out}\n`,
        );
      });
    });

  const benchmark = program
    .command('benchmark')
    .description('The living benchmark the store keeps: items drafted from every snapshot, retired when their evidence changes.');

  benchmark
    .command('build')
    .description(
      'Maintain the benchmark for every snapshot not yet maintained, in date order (for stores ingested before the benchmark existed, or after CHRONOQL_BENCHMARK=off). Safe to re-run.',
    )
    .action(async () => {
      await withRuntime(async (runtime) => {
        const maintainer = runtime.benchmark;
        if (!maintainer) throw new RangeError('CHRONOQL_BENCHMARK=off: no benchmark is kept; unset it (or set local or openai) to build one');
        if (runtime.config.benchmark !== 'openai')
          process.stdout.write(
            'no dialogues: they are drafted by an OpenAI-compatible generator (CHRONOQL_BENCHMARK=openai with CHRONOQL_GENERATOR_BASE_URL and CHRONOQL_GENERATOR_MODEL)\n',
          );
        const reports = await runtime.services.ingest.holdingLease(120_000, () => maintainer.catchUp());
        if (reports.length === 0) process.stdout.write('every snapshot is maintained already; nothing to do\n');
        for (const r of reports) {
          process.stdout.write(
            `${r.snapshotId}: ${r.kept} of ${r.drafted} drafted questions kept by the round-trip filter, ${r.factItems} fact questions, ${r.dialogueTurns} dialogue turns; ${r.carriedOver} carried over, ${r.retired} retired (${((r.carryOverMs + r.draftingMs) / 1000).toFixed(1)} s)\n`,
          );
        }
      });
    });

  benchmark
    .command('export')
    .description('Write the benchmark as of a date as QA JSON Lines (the format eval-answers and eval read).')
    .option('--as-of <date>', 'the benchmark as of this date (default: now)')
    .option('--kinds <list>', `only these kinds (${KINDS.join(', ')})`)
    .option('--types <list>', `only these types (${TYPES.join(', ')})`)
    .requiredOption('--out <file>', 'JSON Lines file to write')
    .action(async (options: { asOf?: string; kinds?: string; types?: string; out: string }) => {
      const asOf = options.asOf ? parseDateInput(options.asOf, '--as-of') : new Date();
      const filter = { asOf, kinds: listOption(options.kinds, KINDS, '--kinds'), types: listOption(options.types, TYPES, '--types') };
      await withRuntime(async (runtime) => {
        const lines = await exportLines(runtime.services.benchmarkItems, filter);
        await writeFile(options.out, lines.map((line) => JSON.stringify(line)).join('\n') + (lines.length > 0 ? '\n' : ''));
        process.stdout.write(`${lines.length} items → ${options.out}\n`);
      });
    });

  benchmark
    .command('import <file>')
    .description("Import a public QA set with its contexts as IMPORTED items (valid from each item's date, or from now).")
    .addOption(new Option('--shape <shape>', 'squad (nested JSON or flat JSON Lines), retrievalqa or dynaquest').choices(IMPORT_SHAPES).makeOptionMandatory())
    .option('--source <name>', "the set's name, prefixed to its item ids (default: the file name)")
    .action(async (file: string, options: { shape: ImportShape; source?: string }) => {
      const text = await readFile(file, 'utf8');
      await withRuntime(async (runtime) => {
        const { items, written } = await importItems(runtime.services.db, text, options.shape, options.source ?? basename(file), new Date());
        process.stdout.write(`${items} items from ${file} (${written} new; the rest were imported before)\n`);
      });
    });
}
