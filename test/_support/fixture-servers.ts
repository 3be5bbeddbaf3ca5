import { readFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { join } from 'node:path';
import * as v from 'valibot';
import type { ResolvedInstance } from '../../src/config/resolved.ts';
import { InstanceSchema } from '../../src/config/schema.ts';
import { buildLaunchSpec, generateSecret, type LaunchSpec } from '../../src/process/launch-spec.ts';
import { type ServerProcess, type SpawnOptions, spawnServer } from '../../src/process/spawn.ts';
import { freePort, ROOT } from './env.ts';

export const FIXTURES = join(ROOT, 'test/fixtures/servers');

/** A validated instance whose program is `program` (absolute), living in `dir`. */
export function instanceFor(
  dir: string,
  program: string,
  extra: { port?: number; args?: string[]; env?: Record<string, string> } = {},
): ResolvedInstance {
  const settings = v.parse(InstanceSchema, {
    ApiPort: extra.port ?? 1212,
    RunCommand: program,
    Arguments: extra.args ?? [],
    EnvironmentVariables: extra.env ?? {},
  });
  return { key: 'alpha', name: 'alpha', dir, apiToken: 'api', program, settings };
}

/** The launch spec of `instance` as `alpha`, without provider cvars; `over` replaces the placeholder URL, secret and env. */
export function specFor(
  instance: ResolvedInstance,
  over: Partial<Omit<Parameters<typeof buildLaunchSpec>[0], 'instance'>> = {},
): LaunchSpec {
  return buildLaunchSpec({
    key: 'alpha',
    instance,
    baseUrl: 'http://h/',
    secret: 's',
    providerCvars: [],
    env: {},
    ...over,
  });
}

/** Every process group a test started, so `killAll` can clean up whatever a failed assertion left. */
const started = new Set<number>();

export function track(pid: number): number {
  started.add(pid);
  return pid;
}

export function killAll(): void {
  for (const pid of started) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  started.clear();
}

export interface Launched {
  proc: ServerProcess;
  spec: LaunchSpec;
  secret: string;
  port: number;
  lines: Array<{ stream: 'stdout' | 'stderr'; line: string }>;
}

/** Launches a fixture server from test/fixtures/servers through the real launch spec and spawnServer. */
export async function launchFixture(
  dir: string,
  name: string,
  opts: { env?: Record<string, string>; args?: string[]; baseUrl?: string; spawn?: Partial<SpawnOptions> } = {},
): Promise<Launched> {
  const port = await freePort();
  const secret = generateSecret();
  const instance = instanceFor(dir, join(FIXTURES, name), {
    port,
    args: ['--cvar', `net.port=${port}`, '--cvar', 'watchdog.checkin_interval=0.2', ...(opts.args ?? [])],
    env: { FIXTURE_LIFETIME_MS: '60000', ...opts.env },
  });
  const spec = specFor(instance, { baseUrl: opts.baseUrl ?? 'http://127.0.0.1:9/', secret, env: process.env });
  const lines: Launched['lines'] = [];
  const proc = await spawnServer(spec, {
    logDir: join(dir, 'logs'),
    persist: false,
    onLine: (stream, line) => lines.push({ stream, line }),
    ...opts.spawn,
  });
  track(proc.pid);
  return { proc, spec, secret, port, lines };
}

/** True once something on 127.0.0.1:port answers HTTP (the fixture's API is up). */
export async function apiUp(port: number): Promise<boolean> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/status`, { signal: AbortSignal.timeout(1000) });
    await res.arrayBuffer();
    return res.ok;
  } catch {
    return false;
  }
}

export async function readLog(dir: string, name = 'server.log'): Promise<string> {
  return readFile(join(dir, 'logs', name), 'utf8').catch(() => '');
}

export interface Recorded {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A loopback HTTP server that records requests and answers with `respond` (default 200; null never answers). */
export async function recorder(
  respond: (
    req: Recorded,
    n: number,
  ) => { status: number; headers?: Record<string, string>; body?: string; delayMs?: number } | null = () => ({
    status: 200,
  }),
): Promise<{
  url: string;
  port: number;
  requests: Recorded[];
  close(): Promise<void>;
}> {
  const requests: Recorded[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString('utf8')));
    req.on('end', () => {
      const rec = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
      requests.push(rec);
      const answer = respond(rec, requests.length);
      if (answer === null) return;
      const send = () => {
        if (!res.destroyed) res.writeHead(answer.status, answer.headers).end(answer.body);
      };
      if (answer.delayMs) setTimeout(send, answer.delayMs).unref();
      else send();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return {
    url: `http://127.0.0.1:${port}/`,
    port,
    requests,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
