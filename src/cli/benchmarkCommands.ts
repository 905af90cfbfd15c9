/** Living benchmarks generated from the store. */
import { writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { parseDateInput } from '../domain/time.js';
import { withRuntime } from './common.js';

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
      process.stdout.write(`${items.length} questions (${count('CHANGED')} CHANGED, ${count('NEW')} NEW, ${count('UNCHANGED')} UNCHANGED) → ${options.out}\n`);
    });
  });
}
