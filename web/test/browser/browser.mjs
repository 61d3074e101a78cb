// Headless Chromium (Debian's /usr/bin/chromium) driven by playwright-core: no browser
// download, no network beyond the page's own origin, a fresh profile each time. Records
// console errors, page errors and every request's URL for the checks.
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { tempDir } from './serve.mjs';

export const CHROMIUM = process.env.EACGM_CHROMIUM ?? '/usr/bin/chromium';

export async function launch() {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} not found: run scripts/setup.sh (Debian package chromium)`);
  const profile = tempDir('eacgm-chromium-');
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    acceptDownloads: true,
    viewport: { width: 1440, height: 900 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const log = { console: [], pageErrors: [], requests: [], failed: [] };
  context.on('request', (r) => log.requests.push(r.url()));
  context.on('response', (r) => {
    if (r.status() >= 400) log.failed.push(`${r.status()} ${r.request().method()} ${r.url()}`);
  });
  context.on('page', (p) => watch(p, log));
  for (const p of context.pages()) watch(p, log);
  return {
    context,
    log,
    async close() {
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}

function watch(page, log) {
  page.on('console', (m) => {
    if (m.type() === 'error') log.console.push(m.text());
  });
  page.on('pageerror', (e) => log.pageErrors.push(String(e)));
}

export async function screenshot(page, outDir, name) {
  fs.mkdirSync(outDir, { recursive: true });
  const file = path.join(outDir, name);
  await page.screenshot({ path: file, fullPage: false });
  return file;
}
