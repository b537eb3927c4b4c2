// Shared helpers for Portal's browser end-to-end tests: start `portal serve` on a free loopback
// port, make a users-mode configuration, open headless Chromium against it and sign in.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium } from 'playwright-core';

export const root = resolve(import.meta.dirname, '..', '..');
export const shots = join(root, 'target', 'e2e');
mkdirSync(shots, { recursive: true });

const bin = process.env.PORTAL_BIN ?? join(root, 'target', 'debug', 'portal');

/**
 * Starts the server on a fresh temporary data folder, or on `at.data` and `at.port` (a restart);
 * resolves to { url, port, data, child, stop }. `stop` sends SIGTERM, as a process manager does:
 * turns still running get 1 s (`--shutdown-grace-seconds 1` unless `extraArgs` give one), then
 * are cut off; `stop({ keep: true })` keeps the data folder for a restart and resolves once the
 * process has exited.
 */
export function startPortal(extraArgs = [], at = {}) {
  const dist = process.env.PORTAL_DIST ?? join(root, 'dist');
  const data = at.data ?? mkdtempSync(join(tmpdir(), 'portal-e2e-'));
  const grace = extraArgs.includes('--shutdown-grace-seconds') ? [] : ['--shutdown-grace-seconds', '1'];
  const args = ['serve', '--port', String(at.port ?? 0), '--dist', dist, '--data', data, ...grace, ...extraArgs];
  const child = spawn(bin, args, {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise((resolveExit) => child.on('exit', resolveExit));
  return new Promise((resolvePortal, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`portal did not start: ${seen}`)), 20000);
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`portal exited with ${code}: ${seen}`)));
    child.stdout.on('data', (chunk) => {
      seen += chunk;
      const match = seen.match(/serving on (http:\/\/\S+)/);
      if (match) {
        clearTimeout(timer);
        const stop = async ({ keep = false } = {}) => {
          child.kill('SIGTERM');
          if (keep) {
            await exited;
          } else {
            rmSync(data, { recursive: true, force: true });
          }
        };
        const port = Number(new URL(match[1]).port);
        resolvePortal({ url: match[1], port, child, data, stop });
      }
    });
  });
}

/** Launches Debian's Chromium headless, as this machine allows it, with a fresh profile. */
export async function launchBrowser() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
    ],
  });
}

/**
 * Starts the server with `args`, opens a page on it (900 by 900 unless `pageOptions` say
 * otherwise) and waits for the app. Resolves to { portal, browser, page, close }; `close` closes
 * the browser and stops the server.
 */
export async function openPortal(args = [], pageOptions = {}) {
  const portal = await startPortal(args);
  let browser;
  const close = async () => {
    await browser?.close();
    portal.stop();
  };
  try {
    browser = await launchBrowser();
    const page = await browser.newPage({ viewport: { width: 900, height: 900 }, ...pageOptions });
    await page.goto(portal.url);
    await page.getByTestId('model-label').waitFor();
    return { portal, browser, page, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** The people of the users-mode configuration `usersConfig` writes. */
export const people = {
  alice: { organisation: 'acme', user: 'alice', name: 'Alice Example', password: 'alice-heron-lake-7' },
  bob: { organisation: 'acme', user: 'bob', name: 'Bob Example', password: 'bob-porto-trip-4' },
  carol: { organisation: 'globex', user: 'carol', name: 'Carol Example', password: 'carol-globex-9' },
};

/**
 * Writes a users-mode configuration folder in a temporary folder: organisation `acme` with alice
 * and bob, `globex` with carol, each added by `portal user add` with their password on standard
 * input, and a demo agent in each organisation. Returns { config, remove }.
 */
export function usersConfig() {
  const folder = mkdtempSync(join(tmpdir(), 'portal-e2e-config-'));
  const config = join(folder, 'config');
  for (const person of Object.values(people)) {
    const added = spawnSync(
      bin,
      ['user', 'add', '--config', config, person.organisation, person.user, '--name', person.name],
      { input: `${person.password}\n`, encoding: 'utf8' },
    );
    if (added.status !== 0) {
      throw new Error(`portal user add ${person.user} failed: ${added.stderr}${added.stdout}`);
    }
  }
  for (const organisation of new Set(Object.values(people).map((p) => p.organisation))) {
    const agents = join(config, 'organisations', organisation, 'agents');
    mkdirSync(agents, { recursive: true });
    writeFileSync(join(agents, 'assistant.toml'), 'name = "Assistant"\nmodel = "demo"\n');
  }
  return { config, remove: () => rmSync(folder, { recursive: true, force: true }) };
}

/** Fills the sign-in page with `person`'s organisation, user and password and presses Enter. */
export async function fillSignIn(page, person, password = person.password) {
  await page.getByLabel('Organisation').fill(person.organisation);
  await page.getByLabel('User', { exact: true }).fill(person.user);
  await page.getByLabel('Password').fill(password);
  await page.getByLabel('Password').press('Enter');
}

/** Opens the portal at `path` and signs `person` in; resolves once the portal is drawn. */
export async function signIn(page, url, person, path = '/') {
  await page.goto(url + path);
  await fillSignIn(page, person);
  await page.getByTestId('person-name').waitFor();
}

/** Sends `text` from the composer and waits for its turn to end completed. */
export async function sendAndWait(page, text, timeout = 60000) {
  const before = await page.locator('.turn').count();
  await page.getByLabel('Message').fill(text);
  await page.getByLabel('Message').press('Enter');
  await page.locator(`[data-turn="${before + 1}"][data-turn-status="completed"]`).waitFor({ timeout });
}

/** The conversation id the page's address names, or null for a new chat. */
export function conversationInUrl(page) {
  const match = new URL(page.url()).pathname.match(/^\/c\/(.+)$/);
  return match ? decodeURIComponent(match[1]) : null;
}

const axeSource = readFileSync(join(root, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');

/**
 * Scans the page with axe-core (WCAG 2.1 A and AA, and best practices); resolves to the serious
 * and critical violations, each as { id, impact, help, nodes }. axe is evaluated in the page
 * through the browser's debugger, so the page's Content-Security-Policy does not stand in its way.
 */
export async function axeScan(page) {
  if (!(await page.evaluate(() => typeof window.axe !== 'undefined'))) {
    await page.evaluate(axeSource);
  }
  const results = await page.evaluate(() => window.axe.run(document, {
    runOnly: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'],
  }));
  return results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(' ')) }));
}

/** Scans `page` in both themes, once every block has settled unless `settled` is false (a reply
 * that cannot settle, its connection down); every serious or critical violation, by `state` and
 * theme. */
export async function scanBoth(page, state, { settled = true } = {}) {
  // Words resolving from their blur (R7) are passing by, and a live block is drawn again each
  // frame; the scan reads the page once every block has settled.
  if (settled) {
    await page.waitForFunction(() => !document.querySelector('.w, .block.live'), null, { timeout: 30000 });
  }
  const found = [];
  for (const theme of ['light', 'dark']) {
    await page.emulateMedia({ colorScheme: theme });
    // A dimmed turn's inks ease for 150 ms when the theme changes (R12); the scan reads the
    // colours they settle on.
    await page.waitForFunction(() => document.getAnimations().every((a) => !(a instanceof CSSTransition)));
    for (const violation of await axeScan(page)) found.push({ state, theme, ...violation });
  }
  await page.emulateMedia({ colorScheme: 'light' });
  return found;
}

/** The widths a new state is looked at: a phone, a laptop and a wide screen. */
export const widths = [390, 1280, 1920];

/**
 * Screenshots `page` at each of `widths` in both themes, as `<name>-<width>-<theme>.png`, then
 * gives it back its viewport and the light theme.
 */
export async function shootWidths(page, name, height = 900) {
  const viewport = page.viewportSize();
  for (const width of widths) {
    await page.setViewportSize({ width, height });
    // A layout change may start transitions (the conversation list becoming a drawer); each
    // screenshot waits for those that end.
    await page.evaluate(() => Promise.all(document.getAnimations()
      .filter((a) => a.effect?.getComputedTiming().iterations !== Infinity)
      .map((a) => a.finished.catch(() => {}))));
    for (const theme of ['light', 'dark']) {
      await page.emulateMedia({ colorScheme: theme });
      await page.screenshot({ path: join(shots, `${name}-${width}-${theme}.png`) });
    }
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize(viewport);
}

/**
 * Lets a test hold the page's animation frames: `hold()` keeps every frame asked for from then
 * on, so a live reply's playout stands still where it is; `release()` asks for them again.
 */
export async function frameHolder(page) {
  await page.evaluate(() => {
    const ask = window.requestAnimationFrame.bind(window);
    const cancel = window.cancelAnimationFrame.bind(window);
    let next = 1e9;
    window.heldFrames = null;
    window.requestAnimationFrame = (callback) => {
      if (!window.heldFrames) return ask(callback);
      next += 1;
      window.heldFrames.set(next, callback);
      return next;
    };
    window.cancelAnimationFrame = (handle) => {
      if (!window.heldFrames?.delete(handle)) cancel(handle);
    };
  });
  return {
    hold: () => page.evaluate(() => { window.heldFrames = new Map(); }),
    release: () => page.evaluate(() => {
      const held = [...(window.heldFrames?.values() ?? [])];
      window.heldFrames = null;
      for (const callback of held) window.requestAnimationFrame(callback);
    }),
  };
}
