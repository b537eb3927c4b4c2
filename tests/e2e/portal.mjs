// Shared helpers for Portal's browser end-to-end tests: start `portal serve` on a free loopback
// port and open headless Chromium against it.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium } from 'playwright-core';

export const root = resolve(import.meta.dirname, '..', '..');
export const shots = join(root, 'target', 'e2e');
mkdirSync(shots, { recursive: true });

/** Starts the server on a fresh temporary data folder; resolves to { url, data, stop }. */
export function startPortal(extraArgs = []) {
  const bin = process.env.PORTAL_BIN ?? join(root, 'target', 'debug', 'portal');
  const dist = process.env.PORTAL_DIST ?? join(root, 'dist');
  const data = mkdtempSync(join(tmpdir(), 'portal-e2e-'));
  const args = ['serve', '--port', '0', '--dist', dist, '--data', data, ...extraArgs];
  const child = spawn(bin, args, {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
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
        const stop = () => {
          child.kill('SIGTERM');
          rmSync(data, { recursive: true, force: true });
        };
        resolvePortal({ url: match[1], child, data, stop });
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
