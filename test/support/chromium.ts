/**
 * Debian's Chromium for the browser tests (`.ci/run` installs it), started headless with the
 * flags this machine needs: without the background-networking ones, Chromium's own connections
 * are refused by the closed network, many at a time.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
export const haveChromium = existsSync(CHROMIUM);

/** `tests` names the tests in the error when Chromium is missing. */
export function launchChromium(tests: string): Promise<Browser> {
  if (!haveChromium) throw new Error(`${tests} need Chromium at ${CHROMIUM}`);
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
