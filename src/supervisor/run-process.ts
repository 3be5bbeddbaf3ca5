import { fromCallback } from 'xstate';
import type { ProcessInput } from '../../machines/instance.setup.ts';
import type { ProcessCommand, ProcessEvent } from '../../machines/instance.types.ts';
import { describeError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { leave, shutdownGracefully } from '../process/graceful.ts';
import { requestUpdate } from '../process/server-api.ts';
import type { ServerProcess } from '../process/spawn.ts';
import { resourceBlock } from '../process/start-child.ts';

/** A server the actor owns: launched now or adopted from the previous daemon. */
export interface OwnedServer {
  proc: ServerProcess;
  secret: string;
  /** Its last line of output so far (a launched server only). */
  lastLine?: () => string | undefined;
}

/** All I/O of the runProcess actor beyond the server itself. */
export interface ProcessHost {
  readonly key: string;
  readonly log: Logger;
  apiPort(): number;
  shutdownWindows(): { requestMs: number; exitMs: number; maxAnswerBytes: number };
  secret(): string;
  /**
   * Rejects with a ProcessError (LaunchBlockedError when not the server's fault). Calls `spawning` once everything
   * before the spawn is done (stragglers cleared, the launch recorded), just before the spawn itself.
   */
  launch(launchId: number, secret: string, spawning: () => void): Promise<OwnedServer>;
  /** The previous daemon's server, verified alive; null when it cannot be adopted. */
  adopt(pid: number): OwnedServer | null;
  /** Dumps the server if configured (bounded in time); never throws. */
  dump(proc: ServerProcess): Promise<void>;
  /** Exited clears the launch record; detached keeps it. */
  released(how: 'exited' | 'detached'): void;
}

/**
 * One per launch: owns the server from spawn to exit. Its cleanup kills the group unless detached: exit actions do
 * not run on actor stop (statelyai/xstate#4630).
 */
export function createRunProcess(host: ProcessHost) {
  return fromCallback<ProcessCommand, ProcessInput>(({ input, sendBack, receive }) => {
    const { launchId } = input;
    const send = (e: ProcessEvent) => sendBack(e);
    let owned: OwnedServer | null = null;
    let detached = false;
    let stopped = false;
    /** How the server is being made to go: later requests of the same or a milder kind are moot. */
    let going: 'leave' | 'shutdown' | 'kill' | null = null;
    const pending: ProcessCommand[] = [];

    const watch = (server: OwnedServer) => {
      owned = server;
      send({ type: 'PROCESS_STARTED', launchId, secret: server.secret, pid: server.proc.pid });
      server.proc.exited.then(
        (status) => {
          if (detached) return;
          host.released('exited');
          const lastLine = server.lastLine?.();
          send({
            type: 'PROCESS_EXITED',
            launchId,
            code: status.code,
            signal: status.signal,
            ...(lastLine === undefined ? {} : { lastLine }),
            ...(status.memoryLimitMB === undefined ? {} : { memoryLimitMB: status.memoryLimitMB }),
          });
        },
        (err: unknown) => {
          host.log.error('lost track of the server process', { pid: server.proc.pid, error: describeError(err) });
          send({ type: 'PROCESS_EXITED', launchId, code: null, signal: null });
        },
      );
      if (stopped) server.proc.kill('SIGKILL');
      for (const cmd of pending.splice(0)) safely(cmd);
    };

    const execute = (cmd: ProcessCommand) => {
      const server = owned;
      if (!server) {
        pending.push(cmd);
        return;
      }
      const opts = { apiPort: host.apiPort(), secret: server.secret, ...host.shutdownWindows(), log: host.log };
      const failed = (what: string) => (err: unknown) => {
        host.log.error(`${what} failed; killing the server`, { pid: server.proc.pid, error: describeError(err) });
        server.proc.kill('SIGKILL');
      };
      if (moot(cmd)) return;
      switch (cmd.type) {
        case 'STOP_GRACEFULLY':
          going = 'shutdown';
          shutdownGracefully(server.proc, { ...opts, reason: cmd.reason }).catch(failed('graceful shutdown'));
          break;
        case 'LEAVE':
          going = 'leave';
          leave(server.proc, { ...opts, reason: 'Stop requested by the watchdog' }).catch(failed('stop'));
          break;
        case 'NOTIFY_UPDATE':
          requestUpdate(opts.apiPort, server.secret, { timeoutMs: opts.requestMs, maxBytes: opts.maxAnswerBytes }).then(
            (delivered) => {
              if (!delivered)
                host.log.warn('the server did not accept POST /update; the update waits for its next restart');
            },
            (err: unknown) => host.log.warn('POST /update failed', { error: describeError(err) }),
          );
          break;
        case 'KILL': {
          going = 'kill';
          const kill = () => server.proc.kill('SIGKILL');
          // Only the first hang of a loop is dumped (the machine says which): one dump per loop, not one per relaunch.
          if (cmd.reason === 'hang' && cmd.dump) host.dump(server.proc).finally(kill);
          else {
            if (cmd.reason === 'hang')
              host.log.info('hang again in the same loop; killed without a dump', { pid: server.proc.pid });
            kill();
          }
          break;
        }
        case 'DETACH':
          detached = true;
          server.proc.detach();
          host.released('detached');
          break;
      }
    };

    /**
     * Never throws out of the actor: XState never runs a failed callback actor's cleanup, so its server would outlive
     * it. A failed command meant to end the server ends it with a kill.
     */
    const safely = (cmd: ProcessCommand) => {
      try {
        execute(cmd);
      } catch (err) {
        host.log.error(`the ${cmd.type} command failed`, { pid: owned?.proc.pid, error: describeError(err) });
        if (cmd.type === 'NOTIFY_UPDATE' || cmd.type === 'DETACH') return;
        try {
          owned?.proc.kill('SIGKILL');
        } catch (killErr) {
          host.log.error('killing the server failed', { pid: owned?.proc.pid, error: describeError(killErr) });
        }
      }
    };

    /** A second stop request while one is under way, or an update notice to a server that is going anyway. */
    const moot = (cmd: ProcessCommand): boolean => {
      if (cmd.type === 'LEAVE' || cmd.type === 'NOTIFY_UPDATE') return going !== null;
      if (cmd.type === 'STOP_GRACEFULLY') return going === 'shutdown' || going === 'kill';
      return false;
    };

    if (input.adoptPid !== null) {
      const server = host.adopt(input.adoptPid);
      if (server) watch(server);
      else send({ type: 'PROCESS_EXITED', launchId, code: null, signal: null });
    } else {
      const secret = host.secret();
      // Valid just before the spawn, so a fast server may check in before we hear back from spawn(); and no sooner,
      // so the first check-in's deadline runs from the spawn, not from a preparation a loaded machine drags out.
      const spawning = () => send({ type: 'PROCESS_STARTED', launchId, secret, pid: null });
      host.launch(launchId, secret, spawning).then(watch, (err: unknown) => {
        // Out of descriptors or memory anywhere on the way, or the game port held: nothing counts against the server.
        const blocked = resourceBlock(err);
        if (blocked) {
          // The instance logs the block with its retry delay; the cause chain goes to debug.
          host.log.debug('launch blocked', { kind: blocked.kind, error: describeError(blocked) });
          send({ type: 'PROCESS_BLOCKED', launchId, kind: blocked.kind, message: blocked.message });
          return;
        }
        host.log.error('launch failed', { error: describeError(err) });
        // A failed spawn is an exit with neither code nor signal (a startup failure), with the message as its reason.
        const failure = err instanceof Error ? err.message : String(err);
        send({ type: 'PROCESS_EXITED', launchId, code: null, signal: null, failure });
      });
    }

    receive(safely);
    return () => {
      stopped = true;
      const server = owned as OwnedServer | null;
      if (server && !detached) server.proc.kill('SIGKILL');
    };
  });
}
