/** What the API accounting check needs of a fake GTI server. */
export interface AccountableFake {
  /** `http://127.0.0.1:PORT` */
  readonly origin: string;
  /** Answered requests per API operation (`GET /files/{id}/behaviours` → n). */
  operations(): Record<string, number>;
}

/** A fake started during the current test, and why its requests are not held against a ledger (if they are not). */
export interface StartedFake {
  fake: AccountableFake;
  unmetered?: string;
}

const started: StartedFake[] = [];

/** Called by startFakeGti for every server it starts. */
export function registerStartedFake(s: StartedFake): void {
  started.push(s);
}

/** The fakes started since the last call (the current test's), forgotten once returned. */
export function takeStartedFakes(): StartedFake[] {
  return started.splice(0);
}
