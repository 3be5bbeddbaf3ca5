/** Helpers for tests that need a real process holding a port (not a suite: no `.test.ts`). */
import { type ChildProcess, spawn } from 'node:child_process';
import { freePort, waitFor } from './env.ts';

/**
 * Starts a node process that binds `proto` on 127.0.0.1 with `env` on top of ours; resolves with it and the port
 * once it is bound. The caller kills it. The port is freePort's unless given, below the kernel's ephemeral range: a
 * port from bind(0) could be taken by another file's outgoing connection the moment the holder lets it go (seen:
 * "free once the udp holder has exited" false while the suite ran).
 */
export async function holdPort(
  proto: 'tcp' | 'udp',
  opts: { port?: number; env?: Record<string, string> } = {},
): Promise<{ child: ChildProcess; pid: number; port: number }> {
  const port = opts.port ?? (await freePort());
  const code =
    proto === 'tcp'
      ? `const s = require('node:net').createServer(); s.listen(${port}, '127.0.0.1', () => process.stdout.write(String(s.address().port)));`
      : `const s = require('node:dgram').createSocket('udp4'); s.bind(${port}, '127.0.0.1', () => process.stdout.write(String(s.address().port)));`;
  const child = spawn(process.execPath, ['-e', `${code} setTimeout(() => process.exit(0), 30000);`], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, ...opts.env },
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  const bound = await waitFor(`a ${proto} socket bound`, () => Number(out.trim()) || undefined, 5000);
  if (child.pid === undefined) throw new Error('could not start the port holder');
  return { child, pid: child.pid, port: bound };
}

/** Kills a holder started by holdPort and waits for its exit. */
export async function release(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await gone;
}
