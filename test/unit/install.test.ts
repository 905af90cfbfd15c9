// A plain `npm ci` / `npm install` must work with only the npm registry reachable:
// onnxruntime-node's install script downloads CUDA libraries from elsewhere unless npm tells it not to.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { projectRoot } from '../../src/platform/paths.js';

describe('installation', () => {
  it("npm hands onnxruntime-node's install script the setting that skips its downloads", () => {
    // What the package's script/install.js reads when npm runs it in this project.
    const seen = execFileSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', ['exec', '-c', 'node -p "process.env.npm_config_onnxruntime_node_install"'], {
      cwd: projectRoot(),
      encoding: 'utf8',
      // Only the project's own configuration counts: not a setting inherited from the shell or an outer npm.
      env: Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(npm_config_onnxruntime|ONNXRUNTIME_NODE_INSTALL)/i.test(name))),
    });
    assert.equal(seen.trim(), 'skip');
  });

  it("records the same decision for npm's install-script policy", () => {
    const manifest = JSON.parse(readFileSync(join(projectRoot(), 'package.json'), 'utf8')) as { allowScripts?: Record<string, boolean> };
    assert.equal(manifest.allowScripts?.['onnxruntime-node'], false);
  });
});
