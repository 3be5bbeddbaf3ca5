import { loadSettings, type Settings } from '../kit/settings.ts';
import { configureLogging, createLogger } from '../log.ts';
import { type DemoServer, startDemoServer } from './server.ts';

/**
 * Entry point of `bin/demo-server` (src/demo/README.md). Exits 0 on /shutdown, after /update and on SIGTERM/SIGINT;
 * 2 on bad arguments or configuration; 1 when it cannot start or on a fatal error; 3 on `demo.crash_after`.
 */
export async function runDemoServer(argv: string[], env: NodeJS.ProcessEnv): Promise<void> {
  configureLogging({ write: (line) => process.stdout.write(line + '\n') });
  const log = createLogger('demo');
  let server: DemoServer | undefined;
  let signalled: string | undefined;
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      // Whoever sends the signal is already ending the server (Agones sends SIGTERM as it deletes the pod).
      if (server) void server.stop(0, `received ${signal}`, { tellAgones: false });
      else signalled = signal; // still starting: stop as soon as there is something to stop
    });
  }

  let settings: Settings;
  try {
    settings = loadSettings({ argv, env });
  } catch (err) {
    log.error(`cannot start: ${(err as Error).message}`);
    process.exit(2);
  }
  try {
    server = await startDemoServer(settings, log, (code) => process.exit(code), env);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const hint = e.code === 'EADDRINUSE' ? ' (another server uses this port; set net.port or status.bind)' : '';
    log.error(`cannot start: ${e.message}${hint}`);
    process.exit(e.name === 'SettingsError' ? 2 : 1);
  }
  if (signalled) void server.stop(0, `received ${signalled}`, { tellAgones: false });
  const running = server;
  running.readConsole(process.stdin);
  const fatal = (err: unknown) => {
    log.error(`fatal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    // A clean stop tells Agones (and closes the sockets); one that hangs must not keep a broken server alive.
    setTimeout(() => process.exit(1), 5_000).unref();
    void running.stop(1, `fatal error: ${err instanceof Error ? err.message : String(err)}`);
  };
  process.once('uncaughtException', fatal);
  process.once('unhandledRejection', fatal);
}
