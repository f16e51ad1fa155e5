// Headless Chromium for the browser tests: Debian's /usr/bin/chromium driven by
// playwright-core (never a downloaded browser), with no network chatter of its own.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { repoRoot } from './workspace.js';

export const CHROMIUM = '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** A fresh profile in a temp folder, removed on close. */
export async function launchChromium(viewport = { width: 1100, height: 1300 }): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'runner-chromium-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: ARGS, viewport });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * A screenshot the tests take: into the test's own folder, and with
 * RUNNER_UPDATE_SCREENSHOTS=1 also into docs/images (the ones the docs show).
 */
export async function screenshot(page: Page, name: string, folder: string): Promise<string> {
  const file = join(folder, name);
  await page.screenshot({ path: file });
  if (process.env.RUNNER_UPDATE_SCREENSHOTS === '1') {
    mkdirSync(join(repoRoot, 'docs', 'images'), { recursive: true });
    await page.screenshot({ path: join(repoRoot, 'docs', 'images', name) });
  }
  return file;
}
