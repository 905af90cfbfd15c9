// Rules of the code's shape that the compiler does not check (dependency-cruiser checks the
// imports between folders: .dependency-cruiser.cjs).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { projectRoot } from '../../src/platform/paths.js';

const MAX_LINES = 500;

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    return entry.isDirectory() ? sourceFiles(path) : entry.name.endsWith('.ts') ? [path] : [];
  });
}

const sources = sourceFiles(join(projectRoot(), 'src')).map((path) => ({ path: relative(projectRoot(), path), text: readFileSync(path, 'utf8') }));

describe('house rules', () => {
  it('reads the environment in one file of src/, app/config.ts', () => {
    const readers = sources.filter(({ text }) => /process\.env\b/.test(text)).map(({ path }) => path);
    assert.deepEqual(readers, [join('src', 'app', 'config.ts')]);
  });

  it(`keeps every file of src/ under ${MAX_LINES} lines unless it is marked as generated`, () => {
    const long = sources
      .filter(({ text }) => text.split('\n').length > MAX_LINES && !/^\/\/ @generated/m.test(text))
      .map(({ path, text }) => `${path}: ${text.split('\n').length}`);
    assert.deepEqual(long, []);
  });
});
