import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import capabilityImports from './scripts/eslint/capabilityImports.js';

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', '.data/', 'sample/', 'bench/out/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    plugins: { sandtrail: { rules: { 'capability-imports': capabilityImports } } },
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': ['error', { allow: ['error'] }],
      'sandtrail/capability-imports': 'error',
    },
  },
  { files: ['scripts/**', 'bench/**', 'test/**'], rules: { 'no-console': 'off' } },
);
