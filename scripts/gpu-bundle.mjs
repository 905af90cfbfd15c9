#!/usr/bin/env node
/**
 * Prepares what native/tools/gpu-check.sh needs on a GPU machine that has no Node and no network
 * (the device tool carries git-ignored paths along with the working tree, 64 MiB in all):
 *   dist/                                 the compiled TypeScript (run `npm run build` first)
 *   build-cuda/Release/                   the CUDA addon (scripts/build-native.mjs, sm_80 + sm_90)
 *   tools/.carry/chronoql_cuda_selftest   the self-test, built here with CMake
 *   tools/.carry/node.xz                  this machine's node, xz-compressed
 * and prints the carry list, its size and the command to run there.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, renameSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const carry = join(root, 'tools', '.carry');
const log = (message) => console.log(`[gpu-bundle] ${message}`);

function run(command, args) {
  log([command, ...args].join(' '));
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) {
    console.error(`[gpu-bundle] ${command} failed (${result.error?.message ?? `exit ${result.status}`})`);
    process.exit(1);
  }
}

function bytesUnder(path) {
  if (!existsSync(path)) return 0;
  const stats = statSync(path);
  return stats.isDirectory() ? readdirSync(path).reduce((sum, entry) => sum + bytesUnder(join(path, entry)), 0) : stats.size;
}

for (const compiled of ['dist/test/unit/native-gpu.test.js', 'dist/bench/search.js']) {
  const source = compiled.replace(/^dist\//, '').replace(/\.js$/, '.ts');
  if (!existsSync(join(root, compiled)) || statSync(join(root, compiled)).mtimeMs < statSync(join(root, source)).mtimeMs) {
    console.error(`[gpu-bundle] ${compiled} is missing or older than ${source}: run npm run build first`);
    process.exit(1);
  }
}
run(process.execPath, [join(root, 'scripts', 'build-native.mjs')]);
if (!existsSync(join(root, 'build-cuda', 'Release', 'chronoql_native.node'))) {
  console.error('[gpu-bundle] no CUDA addon was built (is nvcc on PATH?)');
  process.exit(1);
}

const selftestBuild = join(root, 'build-cuda', 'selftest');
run('cmake', ['-S', root, '-B', selftestBuild, '-DCHRONOQL_BUILD_SELFTEST=ON', '-DCMAKE_BUILD_TYPE=Release']);
run('cmake', ['--build', selftestBuild, '--target', 'chronoql_cuda_selftest', '--parallel']);
mkdirSync(carry, { recursive: true });
copyFileSync(join(selftestBuild, 'chronoql_cuda_selftest'), join(carry, 'chronoql_cuda_selftest'));

const nodeArchive = join(carry, 'node.xz');
if (!existsSync(nodeArchive) || statSync(nodeArchive).mtimeMs < statSync(process.execPath).mtimeMs) {
  log(`compressing ${process.execPath} (${process.version})`);
  const packed = spawnSync('xz', ['-T2', '-c', process.execPath], { maxBuffer: 1 << 30 });
  if (packed.status !== 0) {
    console.error(`[gpu-bundle] xz failed: ${packed.stderr?.toString() || packed.error?.message}`);
    process.exit(1);
  }
  const partial = `${nodeArchive}.partial`;
  spawnSync('sh', ['-c', `cat > "${partial}"`], { input: packed.stdout });
  renameSync(partial, nodeArchive);
}

const carried = ['dist', 'build-cuda/Release', 'tools/.carry'];
const tracked = spawnSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' }).stdout.split('\0').filter(Boolean);
const trackedBytes = tracked.reduce((sum, file) => sum + bytesUnder(join(root, file)), 0);
const carriedBytes = carried.reduce((sum, path) => sum + bytesUnder(join(root, path)), 0);
const mib = (bytes) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
log(
  `tracked files ${mib(trackedBytes)} + carried ${carried.map((path) => `${path} ${mib(bytesUnder(join(root, path)))}`).join(', ')} = ${mib(trackedBytes + carriedBytes)} (the limit is 64 MiB)`,
);
if (trackedBytes + carriedBytes > 64 * 2 ** 20) {
  console.error('[gpu-bundle] too large to carry');
  process.exit(1);
}
log(`on the GPU machine: bash native/tools/gpu-check.sh [checks|bench|all], carrying ${JSON.stringify(carried)}`);
