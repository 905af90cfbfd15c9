import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let cachedRoot: string | undefined;

/**
 * The directory holding ChronoQL's package.json. Found by walking up from this module so it
 * is the same whether the code runs from src/ (tsx) or from the compiled dist/src/.
 */
export function projectRoot(): string {
  if (cachedRoot) return cachedRoot;
  let directory = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(directory, 'package.json'))) {
    const parent = dirname(directory);
    if (parent === directory) throw new Error('cannot find the ChronoQL package root above ' + import.meta.url);
    directory = parent;
  }
  cachedRoot = directory;
  return directory;
}

/** Trained models shipped with ChronoQL (the span scorer, the certainty gate), with the commands that reproduce them. */
export function modelsDir(): string {
  return join(projectRoot(), 'models');
}
