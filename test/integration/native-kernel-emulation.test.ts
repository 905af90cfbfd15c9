// Compiles the CUDA kernels for the CPU and runs them under AddressSanitizer: a compiler run of
// half a minute, so not in the unit tier.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { packageRoot } from '../../src/native/loader.js';

describe('native kernels (emulated)', () => {
  // The CUDA kernels cannot run without a GPU, but their source also compiles
  // for the CPU through a thread-per-lane emulation (native/tools/
  // cuda_emulation.h); this checks their logic against the CPU backend, with
  // AddressSanitizer catching out-of-bounds indexing.
  const compiler = ['c++', 'g++', 'clang++'].find((cc) => spawnSync(cc, ['--version']).status === 0);
  test('CUDA search kernels, emulated on the CPU, agree with the CPU backend', { skip: compiler ? false : 'no C++ compiler', timeout: 180_000 }, () => {
    const native = join(packageRoot(), 'native');
    const sources = [
      'tools/cuda_kernel_emulation.cpp',
      'core/cpu_search.cpp',
      'core/simd.cpp',
      'core/simd_avx2.cpp',
      'core/thread_pool.cpp',
      'core/vector_store.cpp',
    ];
    const inputs = [
      ...sources,
      'tools/cuda_emulation.h',
      'cuda/search_kernels.cuh',
      'core/types.h',
      'core/vector_store.h',
      'core/search_backend.h',
      'core/topk.h',
      'core/simd.h',
      'core/half.h',
    ];
    const binaryDir = join(tmpdir(), 'chronoql-kernel-emulation');
    const binary = join(binaryDir, 'chronoql_kernel_emulation');
    const newest = Math.max(...inputs.map((f) => statSync(join(native, f)).mtimeMs));
    if (!existsSync(binary) || statSync(binary).mtimeMs < newest) {
      mkdirSync(binaryDir, { recursive: true });
      const flags = ['-O1', '-g', '-std=c++17', '-pthread', '-Wno-unknown-pragmas', '-fsanitize=address,undefined', '-I', native, '-o', binary];
      const compiled = spawnSync(compiler!, [...flags, ...sources.map((f) => join(native, f))], { encoding: 'utf8' });
      assert.equal(compiled.status, 0, compiled.stderr);
    }
    const run = spawnSync(binary, [], { encoding: 'utf8', env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=0' } });
    assert.equal(run.status, 0, `${run.stdout}\n${run.stderr}`);
    assert.match(run.stdout, /rows not a multiple of 128, many blocks\s+ok/);
  });
});
