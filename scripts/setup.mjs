// Brings a checkout up to date before `npm test` / `npm run demo`: installs dependencies when
// they are missing or stale, builds the native addon (incrementally; CUDA too when nvcc is
// present) and compiles the TypeScript (incrementally). Neo4j's launcher is built on first use.
import { execFileSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function run(command, args) {
  process.stderr.write(`setup: ${command} ${args.join(' ')}\n`);
  execFileSync(command, args, { cwd: root, stdio: 'inherit' });
}

function modified(path) {
  return existsSync(path) ? statSync(path).mtimeMs : 0;
}

const installed = join(root, 'node_modules', '.package-lock.json');
if (!existsSync(installed)) {
  run(npm, ['ci', '--no-audit', '--no-fund']);
} else if (modified(join(root, 'package-lock.json')) > modified(installed) || modified(join(root, 'package.json')) > modified(installed)) {
  run(npm, ['install', '--no-audit', '--no-fund']);
}
if (existsSync(join(root, 'scripts', 'build-native.mjs'))) run(process.execPath, [join(root, 'scripts', 'build-native.mjs')]);
run(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json']);
