import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';

/** Debian's chromium package (the test command installs it where it can); SANDTRAIL_CHROMIUM overrides. */
export const CHROMIUM = process.env.SANDTRAIL_CHROMIUM ?? '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);

/** Says out loud that a browser test is skipped, and why (vitest lists it as skipped too). */
export function announceSkip(what: string): void {
  if (!hasChromium) console.warn(`SKIPPED: ${what} needs ${CHROMIUM} (apt-get install chromium)`);
}

/** Headless Chromium for a closed network: no first-run, update, sync or metrics traffic. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-dev-shm-usage',
      '--no-first-run',
      '--no-default-browser-check',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-default-apps',
      '--metrics-recording-only',
    ],
  });
}

/** Where screenshots go (kept by CI as test artefacts; ignored by git). */
export function artifactPath(name: string): string {
  const dir = join(process.cwd(), 'test-artifacts');
  mkdirSync(dir, { recursive: true });
  return join(dir, name);
}
