import { type ChildProcess, spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { join } from 'node:path';
import { freePort, ROOT, waitFor } from './env.ts';

export const DEMO_BIN = join(ROOT, 'bin/demo-server');
export const WATCHDOG_BIN = join(ROOT, 'bin/watchdog');

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface RunningDemo {
  port: number;
  proc: ChildProcess;
  pid: number;
  base: string;
  output: () => string;
  exited: Promise<Exit>;
  /** The exit status once the process has exited, else undefined. */
  exit: () => Exit | undefined;
  /** Kills it by pid (SIGKILL when `signal` is not given) and waits for the exit. */
  kill: (signal?: NodeJS.Signals) => Promise<Exit>;
}

export interface StartOptions {
  port?: number;
  env?: Record<string, string>;
  cwd?: string;
  /** Output that means "started"; `null` returns right after spawning. */
  ready?: RegExp | null;
  /** 'pipe' to write console commands to `proc.stdin`; by default there is none. */
  stdin?: 'pipe' | 'ignore';
}

/** Spawns `bin/demo-server` on a free port (`--cvar net.port=P` first, then `args`). */
export async function startDemo(args: string[] = [], opts: StartOptions = {}): Promise<RunningDemo> {
  const port = opts.port ?? (await freePort());
  const env: NodeJS.ProcessEnv = { ...process.env, ...opts.env };
  // The harness's own watchdog token must not leak into a server that is meant to have none.
  if (!opts.env?.ROBUST_CVAR_watchdog__token) delete env.ROBUST_CVAR_watchdog__token;
  const proc = spawn(process.execPath, [DEMO_BIN, '--cvar', `net.port=${port}`, ...args], {
    cwd: opts.cwd ?? ROOT,
    env,
    stdio: [opts.stdin ?? 'ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  let status: Exit | undefined;
  const exited = new Promise<Exit>((resolve) =>
    proc.once('exit', (code, signal) => {
      status = { code, signal };
      resolve(status);
    }),
  );
  const demo: RunningDemo = {
    port,
    proc,
    pid: proc.pid ?? -1,
    base: `http://127.0.0.1:${port}`,
    output: () => out,
    exited,
    exit: () => status,
    async kill(signal = 'SIGKILL') {
      if (status) return status;
      try {
        process.kill(demo.pid, signal);
      } catch {
        // already gone
      }
      return exited;
    },
  };
  const ready = opts.ready === undefined ? /status api listening on http:\/\/\S+/ : opts.ready;
  if (ready) {
    try {
      await waitFor(
        'the demo server to start',
        () => {
          if (status) throw new Error(`demo server exited early (${JSON.stringify(status)}):\n${out}`);
          return ready.test(out);
        },
        15_000,
      );
    } catch (err) {
      await demo.kill();
      throw err;
    }
  }
  return demo;
}

/** Waits for the process to exit, killing it if it takes longer than `ms`. */
export async function exitWithin(demo: RunningDemo, ms = 10_000): Promise<Exit> {
  const timer = setTimeout(() => void demo.kill(), ms);
  const status = await demo.exited;
  clearTimeout(timer);
  return status;
}

/**
 * A UDP player: `send` sends one command and waits for the answer; `receive` waits for a datagram the
 * server sent unasked (such as `announce …`). Unasked datagrams are kept until read, because the
 * server may send one before the test starts waiting (an announcement goes out before the HTTP 200).
 */
export async function udpPlayer(port: number) {
  const socket = createSocket('udp4');
  const inbox: string[] = [];
  let waiter: ((text: string) => void) | undefined;
  socket.on('message', (msg: Buffer) => {
    const text = msg.toString('utf8');
    const take = waiter;
    waiter = undefined;
    if (take) take(text);
    else inbox.push(text);
  });
  await new Promise<void>((r) => socket.bind(0, '127.0.0.1', () => r()));
  const next = (what: string, timeoutMs: number): Promise<string> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        waiter = undefined;
        reject(new Error(`no UDP datagram ${what} within ${timeoutMs} ms`));
      }, timeoutMs);
      waiter = (text) => {
        clearTimeout(timer);
        resolve(text);
      };
    });
  return {
    /** Sends `text` and resolves with the next datagram that arrives after it. */
    send(text: string, timeoutMs = 5000): Promise<string> {
      const answer = next(`answering "${text}"`, timeoutMs);
      socket.send(text, port, '127.0.0.1');
      return answer;
    },
    /** Resolves with the oldest unasked datagram, waiting for one if none has come yet. */
    receive(timeoutMs = 5000): Promise<string> {
      const kept = inbox.shift();
      return kept !== undefined ? Promise.resolve(kept) : next('from the server', timeoutMs);
    },
    close: () => new Promise<void>((r) => socket.close(() => r())),
  };
}

/** POSTs with a fresh connection; returns status and body text. */
export async function post(
  url: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; text: string }> {
  const res = await fetch(url, { method: 'POST', headers: { connection: 'close', ...headers }, body });
  return { status: res.status, text: await res.text() };
}
