/**
 * ChronoQL's house rules, checked in CI (`npm run check:deps`): src/ folders form layers and
 * import only downward, so no two folders import each other, even through others and even for
 * types; product code never imports evaluation, benchmark or test code. ARCHITECTURE.md draws
 * the layers.
 */
// Lowest first: a folder may import only the folders listed before it.
const LAYERS = [
  'domain',
  'platform',
  'text',
  'native',
  'learning',
  'graph',
  'neo4jProcess',
  'embedding',
  'ingest',
  'retrieval',
  'qa',
  'benchmarks',
  'api',
  'app',
  'cli',
];

const upward = LAYERS.map((folder, level) => ({
  name: `layer-${folder}`,
  comment: `src/${folder} may import only the layers below it (${LAYERS.slice(0, level).join(', ') || 'none'})`,
  severity: 'error',
  from: { path: `^src/${folder}/` },
  to: { path: `^src/(${LAYERS.slice(level + 1).join('|') || '$^'})/` },
}));

module.exports = {
  forbidden: [
    {
      name: 'no-folder-cycles',
      comment: 'Folders of src/ must not import each other in a loop (type-only imports count too).',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true, pathNot: '^(node_modules)' },
    },
    {
      name: 'product-imports-no-evaluation',
      comment: 'Product code never imports evaluation, benchmark or test code.',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(eval|bench|test)/' },
    },
    {
      name: 'src-files-in-layers',
      comment: 'Every file of src/ belongs to one of the layers (a new folder gets its place in LAYERS).',
      severity: 'error',
      from: { path: '^src/', pathNot: `^src/(${LAYERS.join('|')})/` },
      to: {},
    },
    ...upward,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
