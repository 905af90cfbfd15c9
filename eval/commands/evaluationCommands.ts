/** Evaluation and training commands: quality on QA files, the certainty gate, the reader, the sentence labeler. */
import { readFile, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { Option, type Command } from 'commander';
import { ConfigError } from '../../src/app/config.js';
import { cliConfig, cliLog, printResult, withProgress, writeJson } from '../../src/cli/common.js';
import { createEmbedder, type Embedder } from '../../src/embedding/index.js';
import { demoSnapshots } from '../../src/ingest/demoCorpus.js';
import { readSnapshotFile } from '../../src/ingest/snapshotReader.js';
import { projectRoot } from '../../src/platform/paths.js';
import type { AdoptionThresholds, GateModelFile } from '../../src/qa/certaintyGate.js';
import type { GateRow } from '../gateTraining.js';

/** Where evaluation and training questions are asked: their own contexts, another file's, dated snapshots, or the configured store. */
const storeOptions = (command: Command): Command =>
  command
    .addOption(new Option('--split <part>', 'use one half of the questions (split by article)').choices(['tune', 'held-out', 'all']).default('held-out'))
    .option('--contexts-as-corpus', "answer over the items' own contexts, in a store of their own under .chronoql-eval")
    .option('--corpus-of <file>', "answer over the contexts of another QA file (its questions' paragraphs are then not in the store)")
    .option('--snapshots <manifest>', 'answer over the dated snapshot files a snapshots.json lists (as data/demo/snapshots.json)');

interface StoreOptions {
  qa: string;
  split: 'tune' | 'held-out' | 'all';
  contextsAsCorpus?: boolean;
  corpusOf?: string;
  snapshots?: string;
}

/** The chosen questions and the store to ask them in (null: the configured one). */
async function questionsAndStore(options: StoreOptions) {
  const { contextsAsCorpus, readQaFile, splitByArticle } = await import('../qaFile.js');
  const { corpusSnapshots } = await import('../evaluationStore.js');
  const all = await readQaFile(options.qa);
  const own = options.contextsAsCorpus ? contextsAsCorpus(all) : null;
  const items = splitByArticle(own?.items ?? all, options.split);
  if (own) return { items, store: corpusSnapshots(options.qa, own.articles) };
  if (options.corpusOf) return { items, store: corpusSnapshots(options.corpusOf, contextsAsCorpus(await readQaFile(options.corpusOf)).articles) };
  if (options.snapshots) {
    const manifest = await demoSnapshots(dirname(options.snapshots), basename(options.snapshots));
    return {
      items,
      store: await Promise.all(manifest.map(async (entry) => ({ takenAt: entry.takenAt, source: entry.source, articles: await readSnapshotFile(entry.file) }))),
    };
  }
  return { items, store: null };
}

/** The sentence labeler's encoder, outside any store (training and evaluation need no database). */
function labelEncoder(): Promise<Embedder> {
  const encoder = cliConfig().labelEncoder;
  if (!encoder) throw new ConfigError("CHRONOQL_LABEL_ENCODER=none: this command needs the labeler's encoder");
  return createEmbedder(encoder);
}

export function addEvaluationCommands(program: Command): void {
  program
    .command('eval-retrieval')
    .description('Recall@1/5/20 and MRR@20 of every search mode on a QA file (JSON Lines: question, answers, context, asOf).')
    .requiredOption('--qa <file>', 'QA file')
    .addOption(new Option('--unit <unit>', 'what is retrieved').choices(['PASSAGE', 'SENTENCE']).default('PASSAGE'))
    .option('--contexts-as-corpus', "use the items' own contexts (one article per distinct text) as the corpus, in a separate data directory (.chronoql-eval)")
    .addOption(
      new Option('--split <part>', 'score one half of the questions, split by article (alternating titles)')
        .choices(['tune', 'held-out', 'all'])
        .default('all'),
    )
    .option('--write-corpus <file>', 'with --contexts-as-corpus: write the contexts as a snapshot file for `chronoql ingest` and stop')
    .option('--endpoint <url>', 'evaluate a running server (e.g. http://127.0.0.1:4000/graphql) instead of opening a store')
    .action(
      async (options: {
        qa: string;
        unit: 'PASSAGE' | 'SENTENCE';
        contextsAsCorpus?: boolean;
        split: 'tune' | 'held-out' | 'all';
        writeCorpus?: string;
        endpoint?: string;
      }) => {
        const { evaluateQaFile } = await import('../evaluationStore.js');
        const table = await evaluateQaFile(options.qa, {
          unit: options.unit,
          contextsAsCorpus: Boolean(options.contextsAsCorpus),
          split: options.split,
          writeCorpus: options.writeCorpus,
          endpoint: options.endpoint,
          log: cliLog(),
        });
        process.stdout.write(table + '\n');
      },
    );

  program
    .command('train-reader')
    .description(
      "Train the extractive reader: write the reader encoder's word states and the word features of a training pool and of both halves of a dev set, then train the head with eval/reader/train_reader.py (PyTorch) and write models/reader.onnx and models/reader.json.",
    )
    .option('--train <file>', 'QA file to train on (gold paragraphs)', join(projectRoot(), 'data', 'squad', 'squad-train-pool.jsonl.gz'))
    .option(
      '--dev <file>',
      'QA file whose tune half chooses the epoch and whose held-out half is reported',
      join(projectRoot(), 'data', 'squad', 'squad-dev-subset.jsonl.gz'),
    )
    .option('--work <dir>', 'where the prepared data goes (about 1 GB; default <data directory>/reader-training)')
    .option('--out <dir>', 'where the model goes', join(projectRoot(), 'models'))
    .option('--python <command>', 'a python3 with PyTorch and NumPy', 'python3')
    .option(
      '--timeqa <file>',
      "TimeQA's questions with their pages: the tune half's answerable ones join the training pool, each with the paragraph that answers it",
    )
    .option('--skip-prepare', 'reuse the data already in --work')
    .option('--joint-layers <n>', "the encoder's top layers the head fine-tunes over question and passage together (0: none)", (v) => Number.parseInt(v, 10), 0)
    .option(
      '--start-encoder <onnx>',
      'with --joint-layers, the ONNX file of the same encoder whose top layers the fine-tune starts from (e.g. the full-precision e5-small-v2.onnx; default: the served int8 one)',
    )
    .option('--ablation', 'also train the variants that leave one part out')
    .action(
      async (given: {
        train: string;
        dev: string;
        work?: string;
        out: string;
        python: string;
        timeqa?: string;
        skipPrepare?: boolean;
        jointLayers: number;
        startEncoder?: string;
        ablation?: boolean;
      }) => {
        const options = { ...given, work: given.work ?? join(cliConfig().dataDir, 'reader-training') };
        const { readQaFile, splitByArticle } = await import('../qaFile.js');
        const { prepareReaderData, ENCODER_LAYERS, layerOutput } = await import('../reader/prepare.js');
        const { READER_ENCODER } = await import('../../src/qa/reader/spanReader.js');
        if (!Number.isInteger(options.jointLayers) || options.jointLayers < 0 || options.jointLayers >= ENCODER_LAYERS) {
          throw new RangeError(`--joint-layers must be an integer from 0 to ${ENCODER_LAYERS - 1}, got ${options.jointLayers}`);
        }
        const wordLayer = options.jointLayers === 0 ? undefined : layerOutput(ENCODER_LAYERS - 1 - options.jointLayers);
        if (!options.skipPrepare) {
          const dev = await readQaFile(options.dev);
          const { timeQaPart, timeQaParagraphItems } = await import('../timeqa.js');
          const timeQa = options.timeqa ? timeQaParagraphItems(timeQaPart(await readQaFile(options.timeqa), 'tune')) : [];
          const train = [...(await readQaFile(options.train)), ...timeQa];
          const splits = { train, tune: splitByArticle(dev, 'tune'), 'held-out': splitByArticle(dev, 'held-out') };
          for (const [name, items] of Object.entries(splits)) {
            const prepared = await withProgress(`${name} questions`, (update) =>
              prepareReaderData(items, {
                dir: options.work,
                name,
                encoder: READER_ENCODER,
                wordLayer,
                encoderCheck: name === 'train',
                modelsDir: cliConfig().modelsDir,
                onProgress: update,
              }),
            );
            process.stdout.write(
              `${name}: ${prepared.questions} questions over ${prepared.passages} paragraphs, ${prepared.withGold} with the answer found as words\n`,
            );
          }
        }
        const { spawn } = await import('node:child_process');
        const script = join(projectRoot(), 'eval', 'reader', 'train_reader.py');
        const args = [
          script,
          ...['--data', options.work, '--out', options.out, '--report', 'held-out', '--joint-layers', String(options.jointLayers)],
          ...(options.startEncoder ? ['--start-encoder', options.startEncoder] : []),
          ...(options.ablation ? ['--ablation'] : []),
        ];
        const code = await new Promise<number | null>((resolve, reject) =>
          spawn(options.python, args, { stdio: 'inherit' }).on('error', reject).on('exit', resolve),
        );
        if (code !== 0) throw new RangeError(`${options.python} ${args.join(' ')} exited with ${code}`);
      },
    );

  program
    .command('make-time-set')
    .description(
      'Build a time-scoped QA set from a QA file with real paragraphs: one answer per paragraph replaced between two dated snapshots, asked before and after the change and with time expressions (answer it with `eval-answers --snapshots DIR/snapshots.json`).',
    )
    .requiredOption('--qa <file>', 'QA file with gold paragraphs (e.g. data/squad/squad-dev-subset.jsonl.gz)')
    .addOption(new Option('--split <part>', 'use one half of it (split by article)').choices(['tune', 'held-out', 'all']).default('held-out'))
    .option('--paragraphs <n>', 'paragraphs whose answer changes', (v) => Number.parseInt(v, 10), 150)
    .requiredOption('--out <dir>', 'directory for the snapshots, their manifest and questions.jsonl')
    .action(async (options: { qa: string; split: 'tune' | 'held-out' | 'all'; paragraphs: number; out: string }) => {
      const { readQaFile, splitByArticle } = await import('../qaFile.js');
      const { makeTimeSet } = await import('../timeScoped/makeTimeSet.js');
      const made = await makeTimeSet(splitByArticle(await readQaFile(options.qa), options.split), {
        dir: options.out,
        paragraphs: options.paragraphs,
        seed: 20261124,
      });
      process.stdout.write(`${made.paragraphs} paragraphs, ${made.changed} with a changed answer, ${made.questions} questions → ${options.out}\n`);
    });

  storeOptions(
    program
      .command('gate-rows')
      .description(
        "Collect the certainty gate's training rows: every first-round candidate of each question with its features and what it was (right, a stale value, wrong), as JSON Lines.",
      )
      .requiredOption('--qa <file>', 'QA file (unanswerable questions have "answers": [])')
      .requiredOption('--out <file>', 'JSON Lines file to write'),
  ).action(async (options: StoreOptions & { out: string }) => {
    const { withEvaluationStore } = await import('../evaluationStore.js');
    const { collectGateRows, firstRoundCandidates } = await import('../gateTraining.js');
    const { items, store } = await questionsAndStore(options);
    const source = `${basename(options.qa)}:${options.split}${options.corpusOf ? `@${basename(options.corpusOf)}` : ''}`;
    const rows = await withEvaluationStore(store, cliLog(), (runtime) =>
      withProgress('questions', (update) => collectGateRows(firstRoundCandidates(runtime.services.answering), items, source, update)),
    );
    await writeFile(options.out, rows.map((row) => JSON.stringify(row)).join('\n') + (rows.length > 0 ? '\n' : ''));
    process.stdout.write(`${rows.length} candidates of ${items.length} questions → ${options.out}\n`);
  });

  program
    .command('train-gate')
    .description('Train the certainty gate on rows from `chronoql gate-rows`, calibrate it and choose its adoption threshold.')
    .requiredOption('--rows <files>', 'comma-separated JSON Lines files of gate rows')
    .option('--fit-only <files>', 'comma-separated row files only to fit on, never to calibrate on (items generated from the facts)')
    .option(
      '--precision <p>',
      'share of adopted answers that must be right on the calibration questions, for facts and for text apart',
      Number.parseFloat,
      0.96,
    )
    .option('--out <file>', 'where the model goes', join(projectRoot(), 'models', 'certainty-gate.json'))
    .action(async (options: { rows: string; fitOnly?: string; precision: number; out: string }) => {
      const { trainGateModel } = await import('../gateTraining.js');
      const [rows, fitOnly] = await Promise.all([readGateRows(options.rows), readGateRows(options.fitOnly)]);
      const { model, report } = await trainGateModel(rows, { precision: options.precision, fitOnly });
      const sources = [...new Set([...rows, ...fitOnly].map((row) => row.source))];
      const command = `chronoql train-gate --rows ${options.rows}${options.fitOnly ? ` --fit-only ${options.fitOnly}` : ''} --precision ${options.precision}`;
      await writeJson(options.out, { ...model, provenance: { command, sources, ...report } });
      printResult({ out: options.out, sources, ...report }, false);
    });

  program
    .command('recalibrate-gate')
    .description(
      "Choose the certainty gate's adoption threshold for one kind of answer again, on rows of questions it was not trained on, keeping its weights.",
    )
    .requiredOption('--rows <files>', 'comma-separated JSON Lines files of gate rows (`chronoql gate-rows`)')
    .addOption(new Option('--kind <kind>', 'which kind of answer').choices(['fact', 'text']).default('fact'))
    .option('--precision <p>', 'share of adopted answers of that kind that must be right', Number.parseFloat, 0.96)
    .option('--gate <file>', 'the gate to start from', join(projectRoot(), 'models', 'certainty-gate.json'))
    .option('--out <file>', 'where the model goes', join(projectRoot(), 'models', 'certainty-gate.json'))
    .action(async (options: { rows: string; kind: keyof AdoptionThresholds; precision: number; gate: string; out: string }) => {
      const { recalibrateGate } = await import('../gateTraining.js');
      const gate = JSON.parse(await readFile(options.gate, 'utf8')) as GateModelFile;
      const rows = await readGateRows(options.rows);
      const { model, report } = await recalibrateGate(gate, rows, { kind: options.kind, precision: options.precision });
      const sources = [...new Set(rows.map((row) => row.source))];
      const command = `chronoql recalibrate-gate --rows ${options.rows} --kind ${options.kind} --precision ${options.precision}`;
      await writeJson(options.out, { ...model, provenance: { ...gate.provenance, recalibrated: { command, sources, ...report } } });
      printResult({ out: options.out, sources, ...report }, false);
    });

  storeOptions(
    program
      .command('eval-answers')
      .description(
        "EM / F1 / match of `ask` on a QA file: the extractive reader on each item's gold paragraph, and through batchAsk with retrieval per mode, with how far adopted answers can be trusted.",
      )
      .requiredOption('--qa <file>', 'QA file')
      .option('--modes <list>', 'retrieval modes for batchAsk, comma-separated', 'NEVER,ALWAYS,GATED,RILM,ADAPTIVE')
      .option('--without-facts', "leave the graph's facts out of the candidates (measures the passage path alone)")
      .option('--out <file>', 'JSON result file'),
  ).action(async (options: StoreOptions & { modes: string; withoutFacts?: boolean; out?: string }) => {
    const { answerTable, evaluateAsk, evaluateGoldParagraph, parseRetrievalModes } = await import('../answerEvaluation.js');
    const { withEvaluationStore } = await import('../evaluationStore.js');
    const modes = parseRetrievalModes(options.modes);
    const { items, store } = await questionsAndStore(options);
    let goldParagraph = null;
    const withRetrieval = await withEvaluationStore(store, cliLog(), async (runtime) => {
      const { reader } = runtime.services;
      if (!options.corpusOf && items.every((item) => item.documents.length > 0)) goldParagraph = await evaluateGoldParagraph(reader, items);
      const ask = options.withoutFacts ? runtime.askService({ factCandidates: false }) : runtime.services.answering;
      return withProgress('batches', (update) => evaluateAsk(ask, items, modes, update));
    });
    const result = {
      qa: options.qa,
      split: options.split,
      corpusOf: options.corpusOf ?? null,
      snapshots: options.snapshots ?? null,
      withoutFacts: Boolean(options.withoutFacts),
      items: items.length,
      goldParagraph,
      withRetrieval,
    };
    if (options.out) await writeJson(options.out, result);
    const gold = goldParagraph as { exactMatch: number; f1: number } | null;
    process.stdout.write(
      `${items.length} questions (${options.qa}, ${options.split})${gold ? `; reader on the gold paragraph: EM ${gold.exactMatch}, F1 ${gold.f1}` : ''}\n${answerTable(withRetrieval)}\n` +
        (withRetrieval.decision ? `retrieval decision accuracy ${withRetrieval.decision.accuracy.toFixed(3)}\n` : '') +
        (options.out ? `details (types, reliability diagram) in ${options.out}\n` : ''),
    );
  });

  program
    .command('eval-timeqa')
    .description(
      'TimeQA as issue 31 measures it: one half of the file ingested as one snapshot (a store of its own), every question asked; evidence holding the answer, EM / F1 of the best guess, adoption and its precision.',
    )
    .requiredOption('--qa <file>', 'the TimeQA file (JSON Lines, optionally .gz)')
    .addOption(
      new Option('--split <part>', 'which half of the pages (by the SHA-1 of the title: 0–7 tune, 8–f report)')
        .choices(['tune', 'report', 'all'])
        .default('tune'),
    )
    .option('--limit <n>', 'at most this many questions (the first of the half)', (v) => Number.parseInt(v, 10))
    .option('--out <file>', 'JSON result file, with every answer')
    .action(async (options: { qa: string; split: 'tune' | 'report' | 'all'; limit?: number; out?: string }) => {
      const { readQaFile } = await import('../qaFile.js');
      const { evaluateTimeQa, timeQaPart, timeQaSnapshot, timeQaSummary } = await import('../timeqa.js');
      const { withEvaluationStore } = await import('../evaluationStore.js');
      const half = timeQaPart(await readQaFile(options.qa), options.split);
      const items = options.limit === undefined ? half : half.slice(0, options.limit);
      const report = await withEvaluationStore([timeQaSnapshot(half)], cliLog(), (runtime) =>
        withProgress('questions', (update) => evaluateTimeQa(runtime.services.answering, items, options.split, update)),
      );
      if (options.out) await writeJson(options.out, report);
      process.stdout.write(`${timeQaSummary(report)}\n`);
    });

  program
    .command('train-reading-gate')
    .description(
      "Train the gate of a period's readings in the text (event time) on one half of TimeQA: every reading of every question, ingested as eval-timeqa does, labelled right or wrong; calibrate it and choose its adoption threshold.",
    )
    .requiredOption('--qa <file>', 'the TimeQA file (JSON Lines, optionally .gz)')
    .addOption(new Option('--split <part>', 'which half of the pages to train on').choices(['tune', 'report', 'all']).default('tune'))
    .option('--precision <p>', 'share of adopted answers that must be right on the calibration questions', Number.parseFloat, 0.9)
    .option('--out <file>', 'where the model goes', join(projectRoot(), 'models', 'reading-gate.json'))
    .action(async (options: { qa: string; split: 'tune' | 'report' | 'all'; precision: number; out: string }) => {
      const { readQaFile } = await import('../qaFile.js');
      const { timeQaPart, timeQaSnapshot } = await import('../timeqa.js');
      const { withEvaluationStore } = await import('../evaluationStore.js');
      const { collectGateRows, periodReadingCandidates, trainGateModel } = await import('../gateTraining.js');
      const { READING_GATE_FEATURES } = await import('../../src/qa/readingGate.js');
      const items = timeQaPart(await readQaFile(options.qa), options.split);
      const source = `${basename(options.qa)}:${options.split}`;
      const rows = await withEvaluationStore([timeQaSnapshot(items)], cliLog(), (runtime) =>
        withProgress('questions', (update) => collectGateRows(periodReadingCandidates(runtime.services.answering), items, source, update)),
      );
      const { model, report } = await trainGateModel(rows, { precision: options.precision, features: READING_GATE_FEATURES, hidden: 0 });
      const command = `chronoql train-reading-gate --qa ${basename(options.qa)} --split ${options.split} --precision ${options.precision}`;
      await writeJson(options.out, { ...model, provenance: { command, sources: [source], ...report } });
      printResult({ out: options.out, sources: [source], ...report }, false);
    });

  program
    .command('train-relations')
    .description('Train the sentence relation classifier (entailment / contradiction / neutral) on controlled edits of the demo corpus sentences.')
    .option('--out <file>', 'where the model goes', join(projectRoot(), 'models', 'sentence-relations.json'))
    .action(async (options: { out: string }) => {
      const { splitSentences } = await import('../../src/ingest/sentenceSplitter.js');
      const { relationTrainingPairs, trainRelationClassifier } = await import('../relationTraining.js');
      const { embedTextsWith } = await import('../../src/ingest/growoverLabeler.js');
      const articles = new Map<string, string[]>();
      for (const snapshot of await demoSnapshots()) {
        for (const article of await readSnapshotFile(snapshot.file)) {
          const sentences = new Set([...(articles.get(article.id) ?? []), ...splitSentences(article.text).map((s) => s.text)]);
          articles.set(article.id, [...sentences]);
        }
      }
      const pairs = relationTrainingPairs([...articles.values()]);
      const embedder = await labelEncoder();
      try {
        const trained = await trainRelationClassifier(pairs, embedTextsWith(embedder));
        await writeJson(options.out, { ...trained.model, provenance: { command: 'chronoql train-relations', embedder: embedder.id, pairs: trained.counts } });
        process.stdout.write(
          `relation classifier: ${pairs.length} pairs ${JSON.stringify(trained.counts)}, loss ${trained.loss.toFixed(4)} → ${options.out}\n`,
        );
      } finally {
        await embedder.close?.();
      }
    });

  program
    .command('eval-event-times')
    .description(
      'Precision and recall of event-time extraction on hand-checked sentences (an interval is right when its start and end match to the stated granularity), with the failures.',
    )
    .option('--cases <file>', 'hand-checked sentences', join(projectRoot(), 'data', 'eval', 'event-times.jsonl'))
    .addOption(
      new Option('--split <part>', 'which sentences: tuned on, reported on, labelled after the extractor was frozen, or all')
        .choices(['tune', 'report', 'fresh', 'all'])
        .default('report'),
    )
    .option('--json', 'print JSON')
    .action(async (options: { cases: string; split: 'tune' | 'report' | 'fresh' | 'all'; json?: boolean }) => {
      const { readEventTimeCases, scoreEventTimes } = await import('../eventTimeEvaluation.js');
      printResult(scoreEventTimes(await readEventTimeCases(options.cases), options.split), options.json);
    });
  program
    .command('eval-labeling')
    .description(
      'Precision, recall, F1 and confusion of the exact-match and GrowOVER sentence labelers on labeled sentence pairs, and the false-change filter on labeled fact pairs; or, with --controlled-edits, on controlled edits of the SQuAD paragraphs (eval/controlledEdits.ts).',
    )
    .option('--sentences <file>', 'labeled sentence pairs', join(projectRoot(), 'test', 'fixtures', 'sentence-pairs.jsonl'))
    .option('--facts <file>', 'labeled fact pairs', join(projectRoot(), 'test', 'fixtures', 'fact-pairs.jsonl'))
    .addOption(
      new Option('--split <part>', 'which cases (demo cases alternate; hand-edited cases are held out; controlled edits: halves by article title)')
        .choices(['tune', 'held-out', 'all'])
        .default('held-out'),
    )
    .option('--controlled-edits', 'label controlled edits of the SQuAD paragraphs instead of the labeled pairs')
    .option(
      '--paragraphs <files>',
      'with --controlled-edits: comma-separated QA files whose paragraphs are edited',
      [join(projectRoot(), 'data', 'squad', 'squad-train-pool.jsonl.gz'), join(projectRoot(), 'data', 'squad', 'squad-dev-subset.jsonl.gz')].join(','),
    )
    .option('--limit <n>', 'with --controlled-edits: at most this many paragraphs per half', (v) => Number.parseInt(v, 10))
    .option('--seed <n>', "with --controlled-edits: the edits' seed", (v) => Number.parseInt(v, 10))
    .option('--json', 'print JSON')
    .action(
      async (options: {
        sentences: string;
        facts: string;
        split: 'tune' | 'held-out' | 'all';
        controlledEdits?: boolean;
        paragraphs: string;
        limit?: number;
        seed?: number;
        json?: boolean;
      }) => {
        const evaluation = await import('../labelingEvaluation.js');
        const { ExactMatchLabeler } = await import('../../src/ingest/sentenceLabeler.js');
        const { GrowOverLabeler, embedTextsWith } = await import('../../src/ingest/growoverLabeler.js');
        const embedder = await labelEncoder();
        try {
          const labelers = [new ExactMatchLabeler(), new GrowOverLabeler({ embed: embedTextsWith(embedder) })];
          if (options.controlledEdits) {
            const edits = await import('../controlledEdits.js');
            const paragraphs = await edits.readParagraphs(options.paragraphs.split(',').map((file) => file.trim()));
            const seed = options.seed ?? edits.DEFAULT_EDIT_SEED;
            const halves = options.split === 'all' ? (['tune', 'held-out'] as const) : [options.split];
            const results: Record<string, unknown> = {};
            for (const half of halves) {
              const cases = edits.controlledEditCases(paragraphs, half, { seed, limit: options.limit });
              // Loading the encoder and the annotator is not labeling: warm them before the timed runs.
              if (cases[0])
                await new GrowOverLabeler({ embed: embedTextsWith(embedder) }).label(
                  cases[0].old.map((text, i) => ({ id: String(i), text, startsParagraph: i === 0 })),
                  cases[0].new.map((text, i) => ({ text, startsParagraph: i === 0 })),
                );
              const sentences = [];
              for (const labeler of labelers) sentences.push(await edits.evaluateControlledEdits(labeler, cases));
              results[half] = {
                split: half,
                seed,
                cases: cases.length,
                articles: new Set(cases.map((c) => c.title)).size,
                kinds: edits.kindCounts(cases),
                sentences,
              };
            }
            printResult({ controlledEdits: true, embedder: embedder.id, ...results }, options.json);
            return;
          }
          const cases = evaluation.splitCases(await evaluation.readSentenceCases(options.sentences), options.split);
          const sentences = [];
          for (const labeler of labelers) sentences.push(await evaluation.evaluateLabeler(labeler, cases));
          const facts = evaluation.evaluateFactPairs(await evaluation.readFactPairs(options.facts));
          printResult({ split: options.split, embedder: embedder.id, sentences, facts }, options.json);
        } finally {
          await embedder.close?.();
        }
      },
    );
}

/** The gate rows of a comma-separated list of JSON Lines files. */
async function readGateRows(list: string | undefined): Promise<GateRow[]> {
  const { readJsonLines } = await import('../../src/ingest/jsonLines.js');
  const files = (list ?? '').split(',').filter((file) => file.trim() !== '');
  return (await Promise.all(files.map(async (file) => (await readJsonLines(file.trim())).parsed.map((line) => line.value as GateRow)))).flat();
}
