/**
 * The daemon's HTTP app over a registry of fake instances, for the HTTP fuzz suites: `alpha` (ApiToken with a colon,
 * a running server with a check-in secret, a binaries folder with one file and a server log), `beta` (no ApiToken,
 * stopped, refusing rollback and update as a real one would), and `gamma`, configured but still starting.
 */
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Hono } from 'hono';
import { createBus } from '../../../src/bus.ts';
import type { AdminCredentials } from '../../../src/http/account-access.ts';
import { createApp } from '../../../src/http/app.ts';
import type { InstanceRegistry } from '../../../src/supervisor/contract.ts';
import {
  fromLoopback,
  type MemoryInstance,
  memoryInstance,
  type RecordingLogger,
  recordingLogger,
} from '../../http/_support/app.ts';

export const ALPHA_TOKEN = 'tok:en';
export const ALPHA_SECRET = 'alpha-secret';
export const BETA_SECRET = 'beta-secret';
export const ADMIN: AdminCredentials = { username: 'boss', password: 'pa:ss' };
/** Contents no answer may ever carry: a hidden file of the binaries folder, and files outside it. */
export const HIDDEN = 'hidden-bytes-0f1e';
export const OUTSIDE = 'outside-bytes-9a8b';

export interface Fixture {
  alpha: MemoryInstance;
  beta: MemoryInstance;
  registry: InstanceRegistry;
}

/** Makes alpha's and beta's folders under `dir` and the registry holding them. */
export async function fixture(dir: string): Promise<Fixture> {
  const alphaDir = join(dir, 'instances', 'alpha');
  await mkdir(join(alphaDir, 'binaries', 'sub'), { recursive: true });
  await mkdir(join(alphaDir, 'logs'), { recursive: true });
  await writeFile(join(alphaDir, 'binaries', 'client.zip'), 'zip bytes');
  await writeFile(join(alphaDir, 'binaries', 'sub', 'a.txt'), 'a');
  await writeFile(join(alphaDir, 'binaries', '.hidden'), HIDDEN);
  // Beside the binaries folder, and linked from inside it: no route may ever serve it.
  await writeFile(join(alphaDir, 'secret.txt'), OUTSIDE);
  await writeFile(join(dir, 'secret.txt'), OUTSIDE);
  await symlink('../../secret.txt', join(alphaDir, 'binaries', 'out-link'));
  await symlink('client.zip', join(alphaDir, 'binaries', 'in-link'));
  await writeFile(join(alphaDir, 'logs', 'server.log'), 'line 1\nline 2\n\u001b[31mred\u001b[0m\npartial');
  const alpha = memoryInstance('alpha', {
    apiToken: ALPHA_TOKEN,
    secret: ALPHA_SECRET,
    binariesDir: join(alphaDir, 'binaries'),
  });
  const beta = memoryInstance('beta', {
    secret: BETA_SECRET,
    state: 'stopped.idle',
    binariesDir: join(dir, 'instances', 'beta', 'binaries'),
  });
  beta.refusal = (action) => (action === 'rollback' ? 'no previous build' : action === 'update' ? 'no provider' : null);
  const byKey = new Map([alpha, beta].map((i) => [i.key, i]));
  const registry: InstanceRegistry = {
    get: (key) => byKey.get(key),
    list: () => [...byKey.values()],
    starting: (key) => key === 'gamma',
  };
  return { alpha, beta, registry };
}

export interface FuzzApp {
  app: Hono;
  log: RecordingLogger;
}

/** The app as the daemon builds it; `admin` configured or not, and `app.request()` made from the loopback or not. */
export function fuzzApp(registry: InstanceRegistry, opts: { admin: boolean; loopback: boolean }): FuzzApp {
  const log = recordingLogger();
  const app = createApp({
    registry,
    bus: createBus(),
    log,
    version: '9.9.9-fuzz',
    admin: opts.admin ? () => ADMIN : undefined,
  });
  return { app: opts.loopback ? fromLoopback(app) : app, log };
}
