// ESLint on the TypeScript of src/, test/, eval/ and bench/ (`npm run lint`, run by `npm test`).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'build/**', 'build-cuda/**', 'node_modules/**', 'scratch/**', 'tools/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    // GraphQL responses read by tests and benchmarks are loosely typed on purpose; the product has no `any`.
    files: ['test/**/*.ts', 'bench/**/*.ts', 'eval/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
