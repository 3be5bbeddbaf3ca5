/**
 * Headless Chromium for the dashboard tests (test/_support/chromium.ts says which one) driven by playwright-core, in
 * a fresh profile folder that is removed afterwards. Where no Chromium can be had, `NO_BROWSER` says why and each
 * dashboard suite registers its tests as skipped.
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import type { Test } from 'uvu';
import { chromiumUnavailable, resolveChromium } from '../../../_support/chromium.ts';
import { ROOT, tempDir, waitFor } from '../../../_support/env.ts';
import { skippedSuite } from '../../../_support/skip.ts';

const found = await resolveChromium();
export const CHROMIUM = found ?? '';
/**
 * A Chromium installed on the system (CHROMIUM_PATH, or Debian's package), or null: the bundled headless shell
 * lacks the plain command-line modes (`--screenshot`, `--dump-dom`) an operator would try.
 */
export const SYSTEM_CHROMIUM: string | null =
  process.env.CHROMIUM_PATH ?? (existsSync('/usr/bin/chromium') ? '/usr/bin/chromium' : null);
/** Why the dashboard suites are skipped on this machine, or null when a Chromium starts. */
export const NO_BROWSER: string | null = found === null ? chromiumUnavailable() : null;

/** The suite `make` builds, or, where no Chromium starts, the same tests registered as skipped (the reason printed). */
export function browserSuite<C extends object>(name: string, make: (name: string) => Test<C>): Test<C> {
  if (NO_BROWSER === null) return make(name);
  console.log(`skipped "${name}": ${NO_BROWSER}`);
  return skippedSuite<C>(name);
}
/** Screenshots land here (gitignored); CI keeps the folder as the run's artefacts. */
export const ARTIFACTS = join(ROOT, 'test-artifacts');

export interface Browser {
  page: Page;
  context: BrowserContext;
  /** Console errors and uncaught page errors, so a test can assert the page ran cleanly. */
  errors: string[];
  close(): Promise<void>;
}

export async function openBrowser(viewport = { width: 1440, height: 900 }): Promise<Browser> {
  const profile = await tempDir('wd-chromium-');
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(profile.path, {
      executablePath: CHROMIUM,
      headless: true,
      viewport,
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
      timeout: 30_000,
    });
  } catch (err) {
    await profile.cleanup();
    throw new Error(`cannot start Chromium at ${CHROMIUM}: ${String(err)}`, { cause: err });
  }
  const page = context.pages()[0] ?? (await context.newPage());
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => errors.push(`page error: ${e.message}`));
  page.on('response', (r) => {
    if (r.status() >= 400) errors.push(`HTTP ${r.status()} for ${r.url()}`);
  });
  return {
    page,
    context,
    errors,
    async close() {
      await context.close().catch(() => undefined);
      await profile.cleanup();
    },
  };
}

/** Until the page says its event stream is live (`#conn`); `url`, when given, is loaded first. */
export async function untilLive(b: Browser, url?: string, ms = 10_000): Promise<void> {
  if (url !== undefined) await b.page.goto(url);
  await waitFor('live', async () => (await b.page.textContent('#conn')) === 'live' || undefined, ms);
}

/** Runs `fn` with the page's scripts disabled: what the daemon's HTML shows on its own (the first paint). */
export async function withoutScripts<T>(b: Browser, fn: () => Promise<T>): Promise<T> {
  const cdp = await b.context.newCDPSession(b.page);
  await cdp.send('Emulation.setScriptExecutionDisabled', { value: true });
  try {
    return await fn();
  } finally {
    await cdp.send('Emulation.setScriptExecutionDisabled', { value: false });
    await cdp.detach();
  }
}

/**
 * Saves the whole page as `name` under ARTIFACTS for a person to look at (no test reads it), when asked:
 * TEST_SCREENSHOTS=1 (.ci/run's first run sets it), or WATCHDOG_UPDATE_DOCS=1 for the picture in docs/. Each costs
 * Chromium about 0.4 CPU-s, the suite's two dozen a fiftieth of its CPU; returns where it would be.
 */
export async function screenshot(page: Page, name: string): Promise<string> {
  const path = join(ARTIFACTS, name);
  if (process.env.TEST_SCREENSHOTS !== '1' && process.env.WATCHDOG_UPDATE_DOCS !== '1') return path;
  await mkdir(dirname(path), { recursive: true });
  await page.screenshot({ path, fullPage: true });
  return path;
}
