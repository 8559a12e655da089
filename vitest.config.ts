import { defineConfig } from 'vitest/config';

/**
 * The suite in two projects: `unit` (in-process, fast) and `integration` (real Redis, worker
 * subprocesses, SQLite, loopback HTTP; `npx vitest run --project integration`). Files run in
 * forked processes, two at a time (the development machines have two cores). One private
 * redis-server serves the whole run (test/support/globalSetup.ts); every test isolates itself
 * with its own queue prefix and store.
 */
const common = {
  globalSetup: ['test/support/globalSetup.ts'],
  // every test that talks to the fake GTI ends by comparing what it answered with the quota ledger
  setupFiles: ['test/support/apiAccountingSetup.ts'],
  pool: 'forks' as const,
  testTimeout: 300_000,
  hookTimeout: 120_000,
  // node's `assert` is used throughout: vitest counts a thrown AssertionError as a failure
  include: [] as string[],
};

const INTEGRATION = ['test/pipeline/**/*.test.ts', 'test/cli/**/*.test.ts'];
/** Run on their own by the test command (scripts/test.sh): they kill cluster masters and time outages. */
const APART =
  process.env.SANDTRAIL_TEST_CLUSTER_APART === '1' ? ['test/pipeline/redisCluster.test.ts', 'test/pipeline/redisFailover.test.ts'] : [];

export default defineConfig({
  test: {
    reporters: ['default', './test/support/runSummaryReporter.ts'],
    maxWorkers: 2,
    projects: [
      { test: { ...common, name: 'unit', include: ['test/**/*.test.ts'], exclude: INTEGRATION } },
      { test: { ...common, name: 'integration', include: INTEGRATION, exclude: APART } },
    ],
  },
});
