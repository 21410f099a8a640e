/**
 * For the web app's browser tests (test/app/): the app built into a temporary directory (the
 * server is pointed at it with GRAPHIR_APP_DIR, so a test never reads a stale dist/), headless
 * Chromium (Debian's, as `.ci/run` installs it), an axe-core check of a page, screenshots at a
 * laptop's and a phone's width under test-results/app/, and a watch on requests that leave the
 * server.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchChromium as launchBrowser } from './chromium.js';
import { buildApp } from '../../app/build.js';

export { CHROMIUM, haveChromium } from './chromium.js';
export const SCREENSHOTS = 'test-results/app';

export const LAPTOP = { width: 1366, height: 768 };
export const PHONE = { width: 390, height: 844 };

const require = createRequire(import.meta.url);

export interface BuiltApp {
  readonly dir: string;
  remove(): void;
}

export async function buildAppForTest(): Promise<BuiltApp> {
  const dir = mkdtempSync(join(tmpdir(), 'graphir-app-'));
  await buildApp(dir);
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export function launchChromium(): Promise<Browser> {
  return launchBrowser("The web app's browser tests");
}

/** Every request the page sends to another origin than `origin` (data: and blob: aside). */
export function foreignRequests(page: Page, origin: string): string[] {
  const foreign: string[] = [];
  page.on('request', (request) => {
    const url = request.url();
    if (!url.startsWith(`${origin}/`) && !/^(data|blob):/.test(url)) foreign.push(url);
  });
  return foreign;
}

interface AxeViolation {
  readonly id: string;
  readonly help: string;
  readonly nodes: readonly { readonly target: readonly string[] }[];
}

/** axe-core's violations on the page as it is now, one line each: rule, help, elements. */
export async function accessibilityViolations(page: Page): Promise<string[]> {
  // Strings, not functions: they run in the page, whose globals this file's types do not know.
  if (!(await page.evaluate("'axe' in window")))
    await page.addScriptTag({ path: require.resolve('axe-core/axe.min.js') });
  const violations = await page.evaluate('axe.run().then((result) => result.violations)');
  return (violations as AxeViolation[]).map(
    (v) => `${v.id}: ${v.help} — ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`,
  );
}

/**
 * The page checked by axe and photographed at a laptop's width and at a phone's, then put back
 * to the laptop's; returns the violations found at either width.
 */
export async function checkPage(page: Page, name: string): Promise<string[]> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const violations = new Set<string>();
  for (const [size, viewport] of [
    ['phone', PHONE],
    ['laptop', LAPTOP],
  ] as const) {
    await page.setViewportSize(viewport);
    // CodeMirror measures the lines of an editor once it is in view, in a frame after: scrolled
    // down and back, the full-page picture shows editors below the fold as a reader sees them.
    await page.evaluate(`(async () => {
      const frames = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
      window.scrollTo(0, document.body.scrollHeight);
      await frames();
      window.scrollTo(0, 0);
      await frames();
    })()`);
    for (const violation of await accessibilityViolations(page))
      violations.add(`${size}: ${violation}`);
    await page.screenshot({ path: join(SCREENSHOTS, `${name}-${size}.png`), fullPage: true });
  }
  return [...violations];
}
