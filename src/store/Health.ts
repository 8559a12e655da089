/** Outcome of one health check: `warn` is worth fixing but nothing breaks; `fail` stops something from working. */
export type HealthStatus = 'pass' | 'warn' | 'fail';

/** One diagnosed aspect of an installation or a store; `fix` is present whenever the status is not `pass`. */
export interface HealthCheck {
  id: string;
  title: string;
  status: HealthStatus;
  detail: string;
  fix?: string;
}

/** Builders for the results of one check id, so every result carries its id and title. */
export interface HealthCheckOf {
  pass(detail: string): HealthCheck;
  warn(detail: string, fix: string): HealthCheck;
  fail(detail: string, fix: string): HealthCheck;
}

/** The result builders of one check. */
export function healthCheckOf(id: string, title: string): HealthCheckOf {
  return {
    pass: (detail) => ({ id, title, status: 'pass', detail }),
    warn: (detail, fix) => ({ id, title, status: 'warn', detail, fix }),
    fail: (detail, fix) => ({ id, title, status: 'fail', detail, fix }),
  };
}
