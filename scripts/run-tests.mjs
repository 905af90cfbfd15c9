// Runs the test suite in two tiers: test/unit needs no database; test/integration talks to a real
// Neo4j. With --unit only the unit tier runs, and no Neo4j is started; with --node-major N the
// tests run under that Node release line (scripts/fetch-node.mjs) instead of this one, and with
// --unit-node-major N or --integration-node-major N only that tier does. Otherwise both tiers run: the managed Neo4j in
// .chronoql-test is started (or CHRONOQL_TEST_NEO4J_URI is used), every test file (or the files
// named) runs one at a time (they share the database and each test resets it), except those that
// never touch it (the unit tier and OWN_STORE_OR_NONE), which run beside them (in turn among
// themselves), and what was started is stopped.
import { execFileSync, spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
// `npm test -- test/ask.test.ts` runs only the files named; other arguments go to node --test.
const unitOnly = process.argv.includes('--unit');
const valueOf = (option) => {
  const at = process.argv.indexOf(option);
  return at > 0 ? process.argv[at + 1] : undefined;
};
// `--node-major 24` runs the tests under that Node release line, fetched from the npm registry;
// `--unit-node-major 24` or `--integration-node-major 24` only that tier, the other under this Node.
const nodeMajor = valueOf('--node-major');
const unitNodeMajor = valueOf('--unit-node-major') ?? nodeMajor;
const integrationNodeMajor = valueOf('--integration-node-major') ?? nodeMajor;
const ownArguments = new Set(['--unit', '--node-major', nodeMajor, '--unit-node-major', unitNodeMajor, '--integration-node-major', integrationNodeMajor]);
const named = process.argv.slice(2).filter((arg) => arg.endsWith('.test.ts'));
const passed = process.argv.slice(2).filter((arg) => !arg.endsWith('.test.ts') && !ownArguments.has(arg));
const tier = (name) =>
  readdirSync(join(root, 'test', name))
    .filter((file) => file.endsWith('.test.ts'))
    .sort()
    .map((file) => join('test', name, file));
const files = named.length > 0 ? named : unitOnly ? tier('unit') : [...tier('unit'), ...tier('integration')];
if (files.length === 0) {
  process.stderr.write('run-tests: no test files found under test/\n');
  process.exit(1);
}
const inUnitTier = (file) => file.split(/[\\/]/).includes('unit');
const needsNeo4j = files.some((file) => !inUnitTier(file));
// Files that never touch the shared store (the unit tier, and integration files that run Neo4j stores
// of their own, or none) run beside the others, one after another: the two streams keep both cores busy.
const OWN_STORE_OR_NONE = ['disk-full', 'faults', 'native-kernel-emulation', 'squad-text-fuzz'].map((name) => join('test', 'integration', `${name}.test.ts`));
const apartFromTheSharedStore = (file) => inUnitTier(file) || OWN_STORE_OR_NONE.includes(file);
const beside = named.length === 0 && !unitOnly ? files.filter(apartFromTheSharedStore) : [];
const inTurn = files.filter((file) => !beside.includes(file));

// The JVMs the tests start for a few minutes each (the fault tests' own stores) compile with C1 only: the fault
// tests took 345 CPU-s, not 399, and 231 s, not 257. The shared Neo4j keeps C2: it serves the slower stream, and
// with C1 the subscriber tests took less CPU (184 s, not 233) but longer (136 s, not 133).
const shortLivedJvmOptions = process.env.JDK_JAVA_OPTIONS ?? '-XX:TieredStopAtLevel=1';
const external = process.env.CHRONOQL_TEST_NEO4J_URI;
let neo4j;
if (!needsNeo4j) {
  neo4j = { uri: '', user: '', password: '', stop: async () => {} };
} else if (external) {
  neo4j = {
    uri: external,
    user: process.env.CHRONOQL_TEST_NEO4J_USER ?? 'neo4j',
    password: process.env.CHRONOQL_TEST_NEO4J_PASSWORD ?? '',
    stop: async () => {},
  };
} else {
  const { startManagedNeo4j } = await import(join(root, 'dist', 'src', 'neo4jProcess', 'managedNeo4j.js'));
  neo4j = await startManagedNeo4j({
    dataDir: join(root, '.chronoql-test'),
    heapMb: 1024,
    javaHome: process.env.JAVA_HOME,
    environment: process.env,
    log: (message) => process.stderr.write(`run-tests: ${message}\n`),
  });
}

const nodeOf = async (major) => (major ? (await import('./fetch-node.mjs')).fetchNode(major) : process.execPath);
const node = await nodeOf(integrationNodeMajor);
const unitNode = await nodeOf(unitNodeMajor);
const versionOf = (binary) => execFileSync(binary, ['--version'], { encoding: 'utf8' }).trim();
const nodeVersion = versionOf(node);
// The shared-store files run in one process where Node allows it (23 and later): each file's own start (tsx,
// the schema, the models: about 8 s on two cores) is paid once, not 21 times. Files already run one at a time.
const oneProcess = Number(/^v(\d+)/.exec(nodeVersion)[1]) >= 23 && inTurn.length > 1;
process.stderr.write(
  `run-tests: ${files.length} files, the integration tier under Node ${nodeVersion}${unitNode === node ? '' : `, the unit tier under Node ${versionOf(unitNode)}`}${beside.length ? ` (${beside.length} of them, which never touch the shared store, beside the others)` : ''}${oneProcess ? '; the shared-store files in one process' : ''}\n`,
);

/**
 * Runs `list` under node --test, the unit tier's files under their own Node; its output goes to ours as it
 * comes, or, when `held`, all at once at the end.
 */
function runFiles(list, held) {
  const unitTier = list.every(inUnitTier);
  // Unit files share no database, so two run at once, unless beside the others, which keep the other core busy;
  // integration files share one Neo4j and run one at a time.
  const concurrency = unitTier && beside.length === 0 ? 2 : 1;
  const isolation = list === inTurn && oneProcess ? ['--test-isolation=none'] : [];
  const args = ['--import', 'tsx', '--test', ...isolation, `--test-concurrency=${concurrency}`, '--test-reporter=spec', ...passed, ...list];
  // The living benchmark drafts questions with the models after every ingest (seconds per snapshot): tests of other
  // features ingest without it, and test/integration/benchmark.test.ts turns it on for itself.
  const child = spawn(unitTier ? unitNode : node, args, {
    cwd: root,
    stdio: held ? ['ignore', 'pipe', 'pipe'] : 'inherit',
    env: {
      ...process.env,
      NEO4J_URI: neo4j.uri,
      NEO4J_USER: neo4j.user,
      NEO4J_PASSWORD: neo4j.password,
      CHRONOQL_DATA_DIR: join(root, '.chronoql-test'),
      CHRONOQL_BENCHMARK: process.env.CHRONOQL_BENCHMARK ?? 'off',
      JDK_JAVA_OPTIONS: shortLivedJvmOptions,
    },
  });
  const output = [];
  if (held) for (const stream of [child.stdout, child.stderr]) stream.on('data', (chunk) => output.push(chunk));
  return new Promise((resolve) =>
    child.on('exit', (exitCode, signal) => {
      if (held) process.stdout.write(Buffer.concat(output));
      resolve(exitCode ?? (signal ? 1 : 0));
    }),
  );
}

/** The files beside the shared store, the unit tier first, one run after another; the first failure's exit code. */
async function runBeside() {
  let code = 0;
  for (const list of [beside.filter(inUnitTier), beside.filter((file) => !inUnitTier(file))]) {
    if (list.length === 0) continue;
    // Awaited before `||=`, which would skip the run once a failure is recorded.
    const exit = await runFiles(list, true);
    code ||= exit;
  }
  return code;
}

const codes = await Promise.all([runFiles(inTurn, false), ...(beside.length ? [runBeside()] : [])]);
await neo4j.stop();
process.exit(codes.find((code) => code !== 0) ?? 0);
