import assert from 'node:assert/strict';
import type { FakeGti } from './fakeGti.js';
import { unitsOf } from './fakeGti/operationOf.js';
import { takeStartedFakes, type AccountableFake } from './fakeGti/registry.js';

/** Where a test's ledger lives: the Redis and queue prefix of a config (several configs may share a fake). */
export interface LedgerTarget {
  redisUrl?: string;
  queuePrefix: string;
  redisCluster?: boolean;
}

/** Calls and API units per operation. */
export type OperationTotals = Record<string, { calls: number; units: number }>;

export interface ApiAccounting {
  /** One more ledger the fakes' requests may be recorded on (a command run with another prefix). */
  ledger(target: LedgerTarget): ApiAccounting;
  /** One more fake whose requests land on the same ledgers. */
  fake(fake: FakeGti): ApiAccounting;
  /**
   * The `api_units` a run summary reported. When a test reports any, their sum must equal the
   * ledger's units: report every run's, or none.
   */
  summary(apiUnits: number | undefined): ApiAccounting;
}

interface Account {
  fakes: AccountableFake[];
  targets: LedgerTarget[];
  summaries: number[];
}

let accounts: Account[] = [];

/**
 * Holds `fakes`' requests against the ledgers of `targets` when the test ends (checked by the
 * `afterEach` of test/support/apiAccountingSetup.ts): per operation, the requests the fakes
 * answered must be the ledger's calls, their units by the spec's rules (1, 2, 3) the ledger's
 * units, and the run summaries' `api_units` (reported with `summary`) the ledger's total. Every
 * test whose fake answers API requests calls it (or starts the fake `unmetered`), so no path can
 * drift from what the service counts.
 */
export function accountApi(fakes: FakeGti | FakeGti[], ...targets: LedgerTarget[]): ApiAccounting {
  const account: Account = { fakes: Array.isArray(fakes) ? fakes : [fakes], targets: [...targets], summaries: [] };
  accounts.push(account);
  const api: ApiAccounting = {
    ledger: (t) => (account.targets.push(t), api),
    fake: (f) => (account.fakes.push(f), api),
    summary: (n) => {
      assert.equal(typeof n, 'number', 'a run summary without api_units');
      account.summaries.push(n as number);
      return api;
    },
  };
  return api;
}

/** What the fakes answered, priced by the spec's rules. */
export function serverTotals(fakes: readonly AccountableFake[]): OperationTotals {
  const out: OperationTotals = {};
  for (const f of fakes)
    for (const [op, n] of Object.entries(f.operations())) {
      const t = (out[op] ??= { calls: 0, units: 0 });
      t.calls += n;
      t.units += n * unitsOf(op);
    }
  return sorted(out);
}

/** What the ledgers of `targets` recorded (their audit streams: every call, whatever its period). */
export async function ledgerTotals(targets: readonly LedgerTarget[]): Promise<OperationTotals> {
  const { openRedisProbe } = await import('../../src/queue/index.js');
  const { QuotaLedger } = await import('../../src/quota/index.js');
  const out: OperationTotals = {};
  const seen = new Set<string>();
  for (const t of targets) {
    const key = `${t.redisUrl}|${t.queuePrefix}`;
    if (seen.has(key) || !t.redisUrl) continue;
    seen.add(key);
    const redis = openRedisProbe(t.redisUrl, 5000, { lazyConnect: true, redisCluster: t.redisCluster });
    redis.on('error', () => undefined);
    try {
      await redis.connect();
      for (const e of await new QuotaLedger(redis, t.queuePrefix).audit(Number.MAX_SAFE_INTEGER)) {
        // a request that got no answer is kept apart, not a call the service counted
        if (e.answered === false) continue;
        const o = (out[e.op] ??= { calls: 0, units: 0 });
        o.calls += 1;
        o.units += e.units.api_requests ?? 0;
      }
    } finally {
      redis.disconnect();
    }
  }
  return sorted(out);
}

function sorted(t: OperationTotals): OperationTotals {
  return Object.fromEntries(Object.entries(t).sort(([a], [b]) => a.localeCompare(b)));
}

const total = (t: OperationTotals): number => Object.values(t).reduce((n, o) => n + o.units, 0);

/**
 * The end-of-test check: every fake started during the test is accounted for (or unmetered), and
 * for each account server, ledger and summaries agree. Records still in flight (a worker that
 * got its answer an instant ago) are waited for a few seconds.
 */
export async function checkApiAccounting(testFailed: boolean): Promise<void> {
  const started = takeStartedFakes();
  const mine = accounts;
  accounts = [];
  if (testFailed) return;
  for (const s of started) {
    if (s.unmetered !== undefined || mine.some((a) => a.fakes.includes(s.fake))) continue;
    const answered = Object.keys(s.fake.operations());
    if (answered.length > 0)
      assert.fail(
        `the fake GTI at ${s.fake.origin} answered ${answered.join(', ')} but no ledger was compared with it: ` +
          'call accountApi(fake, config) (test/support/apiAccounting.ts), or start it with unmetered: "why"',
      );
  }
  for (const a of mine) {
    let server = serverTotals(a.fakes);
    let ledger = await ledgerTotals(a.targets);
    for (let i = 0; i < 50 && !isDeepEqual(server, ledger); i++) {
      await new Promise((r) => setTimeout(r, 100));
      server = serverTotals(a.fakes);
      ledger = await ledgerTotals(a.targets);
    }
    assert.deepEqual(ledger, server, 'the ledger (actual) disagrees with the requests the fake GTI answered (expected)');
    if (a.summaries.length > 0)
      assert.equal(
        a.summaries.reduce((n, x) => n + x, 0),
        total(ledger),
        `the run summaries' api_units (${a.summaries.join(' + ')}) disagree with the ledger's units`,
      );
  }
}

function isDeepEqual(a: unknown, b: unknown): boolean {
  try {
    assert.deepEqual(a, b);
    return true;
  } catch {
    return false;
  }
}
