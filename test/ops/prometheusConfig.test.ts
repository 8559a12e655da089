import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'vitest';
import { parse } from 'yaml';
import { PipelineMetrics } from '../../src/metrics/index.js';

/** The names a registry exposes, with the _bucket/_sum/_count series of histograms. */
function exposedNames(): Set<string> {
  const names = new Set<string>();
  for (const m of new PipelineMetrics().registry.getMetricsAsArray()) {
    names.add(m.name);
    if (String(m.type) === 'histogram') for (const s of ['_bucket', '_sum', '_count']) names.add(`${m.name}${s}`);
  }
  return names;
}

test('the shipped Prometheus config scrapes every worker service of the compose file, and its alert rules use only metric names sandtrail exposes', () => {
  const names = exposedNames();
  const rules = parse(readFileSync('deploy/prometheus/sandtrail-alerts.yml', 'utf8')) as {
    groups: { rules: { alert: string; expr: string }[] }[];
  };
  const used = new Set<string>();
  for (const g of rules.groups) for (const r of g.rules) for (const name of r.expr.match(/\bsandtrail_[a-z_]+/g) ?? []) used.add(name);
  assert.ok(used.size >= 6);
  for (const name of used) assert.ok(names.has(name), `${name} is not a metric sandtrail exposes`);

  const prom = parse(readFileSync('deploy/prometheus/prometheus.yml', 'utf8')) as {
    scrape_configs: { job_name: string; metrics_path: string; dns_sd_configs: { names: string[]; port: number }[] }[];
  };
  const job = prom.scrape_configs.find((j) => j.job_name === 'sandtrail');
  assert.ok(job);
  assert.equal(job.metrics_path, '/metrics');
  const compose = parse(readFileSync('docker-compose.yml', 'utf8')) as {
    'x-sandtrail-env': Record<string, string>;
    services: Record<string, { command?: string[]; expose?: string[] }>;
  };
  const port = Number(compose['x-sandtrail-env'].SANDTRAIL_HTTP_PORT);
  const workerServices = Object.entries(compose.services)
    .filter(([, s]) => s.command?.[0] === 'worker')
    .map(([name]) => name)
    .sort();
  assert.deepEqual([...(job.dns_sd_configs[0]?.names ?? [])].sort(), workerServices);
  assert.equal(job.dns_sd_configs[0]?.port, port);
  for (const name of workerServices) assert.deepEqual(compose.services[name]?.expose, [String(port)], name);
});
