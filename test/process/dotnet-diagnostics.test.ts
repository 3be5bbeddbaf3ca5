import { spawn } from 'node:child_process';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import {
  decodeString,
  E_UNKNOWN_COMMAND,
  encodeMessage,
  HEADER_SIZE,
  requestDump,
} from '../../src/process/dotnet-diagnostics.ts';
import { dumpProcess, findDiagnosticsSocket, processState } from '../../src/process/dump.ts';
import { statFields } from '../../src/process/proc-info.ts';
import { tempSuite, waitFor } from '../_support/env.ts';
import { captureLog } from '../_support/recording-logger.ts';

/** A request as the fake runtime received it. */
interface Seen {
  size: number;
  commandSet: number;
  commandId: number;
  reserved: number;
  path: string | null;
  dumpType: number;
  flags: number;
  magic: string;
}

type Answer = (req: Seen, sock: Socket) => void;

/**
 * A stand-in for the runtime's diagnostics server on a Unix socket: reads one whole request per connection (its
 * header says how long), records it, and lets the test answer (or not).
 */
async function fakeRuntime(path: string, answer: Answer): Promise<{ server: Server; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((sock) => {
    let buf = Buffer.alloc(0);
    sock.on('error', () => undefined);
    sock.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      if (buf.length < HEADER_SIZE || buf.length < buf.readUInt16LE(14)) return;
      const path = decodeString(buf, HEADER_SIZE);
      const after = HEADER_SIZE + 4 + buf.readUInt32LE(HEADER_SIZE) * 2;
      const req: Seen = {
        magic: buf.toString('latin1', 0, 14),
        size: buf.readUInt16LE(14),
        commandSet: buf[16] ?? -1,
        commandId: buf[17] ?? -1,
        reserved: buf.readUInt16LE(18),
        path,
        dumpType: buf.readUInt32LE(after),
        flags: buf.readUInt32LE(after + 4),
      };
      seen.push(req);
      answer(req, sock);
    });
  });
  await new Promise<void>((ok) => server.listen(path, ok));
  return { server, seen };
}

/** The server's reply: Server command set, OK or Error, and its payload. */
const reply = (id: number, payload: Buffer = Buffer.alloc(0)) => encodeMessage(0xff, id, payload);
const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n >>> 0, 0);
  return b;
};
const utf16 = (s: string) => Buffer.concat([u32(s.length + 1), Buffer.from(`${s}\0`, 'utf16le')]);

const ipc = tempSuite<{ servers: Server[]; pids: number[] }>('dotnet-diagnostics', {
  prefix: 'wd-dnipc-',
  ctx: { servers: [], pids: [] },
  after: async (ctx) => {
    for (const pid of ctx.pids.splice(0)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    await Promise.all(ctx.servers.splice(0).map((s) => new Promise((r) => s.close(r))));
  },
});

ipc(
  'dotnet-diagnostics :: a dump request is framed as the protocol says; an OK with HRESULT 0 is success',
  async (ctx) => {
    const sockPath = join(ctx.dir, 'rt.sock');
    const { server, seen } = await fakeRuntime(sockPath, (_req, sock) => sock.end(reply(0x00, u32(0))));
    ctx.servers.push(server);
    const r = await requestDump(sockPath, '/var/dumps/dump_é', 'Full', 5000);
    assert.equal(r, { ok: true, command: 3 });
    assert.is(seen.length, 1);
    const req = seen[0];
    assert.is(req?.magic, 'DOTNET_IPC_V1\0');
    assert.is(req?.commandSet, 0x01, 'the Dump command set');
    assert.is(req?.commandId, 0x03, 'GenerateCoreDump3 first');
    assert.is(req?.reserved, 0);
    // header + uint32 length + UTF-16 path with its NUL + dump type + flags
    assert.is(req?.size, HEADER_SIZE + 4 + ('/var/dumps/dump_é'.length + 1) * 2 + 8);
    assert.is(req?.path, '/var/dumps/dump_é');
    assert.is(req?.dumpType, 4, 'Full = 4');
    assert.is(req?.flags, 0);
  },
);

ipc('dotnet-diagnostics :: an error reply gives the runtime message and its HRESULT', async (ctx) => {
  const sockPath = join(ctx.dir, 'rt.sock');
  const { server } = await fakeRuntime(sockPath, (_req, sock) =>
    sock.end(reply(0xff, Buffer.concat([u32(0x80004005), utf16('Could not create output file')]))),
  );
  ctx.servers.push(server);
  const r = await requestDump(sockPath, '/x', 'Normal', 5000);
  assert.is(r.ok, false);
  assert.ok(!r.ok && r.hresult === 0x80004005);
  assert.match(!r.ok ? r.reason : '', /Could not create output file \(HRESULT 0x80004005\)/);
});

ipc('dotnet-diagnostics :: an older runtime that knows only the first dump command is asked with it', async (ctx) => {
  const sockPath = join(ctx.dir, 'rt.sock');
  const { server, seen } = await fakeRuntime(sockPath, (req, sock) =>
    sock.end(req.commandId === 0x01 ? reply(0x00, u32(0)) : reply(0xff, u32(E_UNKNOWN_COMMAND))),
  );
  ctx.servers.push(server);
  const r = await requestDump(sockPath, '/x', 'WithHeap', 5000);
  assert.equal(r, { ok: true, command: 1 });
  assert.equal(
    seen.map((s) => [s.commandId, s.dumpType]),
    [
      [3, 2],
      [2, 2],
      [1, 2],
    ],
    'one connection per command, newest first, the dump type each time',
  );
});

ipc('dotnet-diagnostics :: an OK whose HRESULT is a failure is a failure', async (ctx) => {
  const sockPath = join(ctx.dir, 'rt.sock');
  const { server } = await fakeRuntime(sockPath, (_req, sock) => sock.end(reply(0x00, u32(0x80070005))));
  ctx.servers.push(server);
  const r = await requestDump(sockPath, '/x', 'Triage', 5000);
  assert.equal(r, { ok: false, reason: 'the runtime answered HRESULT 0x80070005', hresult: 0x80070005 });
});

ipc('dotnet-diagnostics :: a reply cut short, or none before the connection closes, is reported', async (ctx) => {
  const sockPath = join(ctx.dir, 'rt.sock');
  let n = 0;
  const { server } = await fakeRuntime(sockPath, (_req, sock) => {
    // First a header that announces 28 bytes and then closes after 22; then a close with nothing at all.
    if (n++ === 0) sock.end(reply(0x00, u32(0)).subarray(0, 22));
    else sock.end();
  });
  ctx.servers.push(server);
  const short = await requestDump(sockPath, '/x', 'Normal', 5000);
  assert.match(!short.ok ? short.reason : '', /short reply \(22 of the 24 bytes/);
  const none = await requestDump(sockPath, '/x', 'Normal', 5000);
  assert.match(!none.ok ? none.reason : '', /closed the connection without a reply/);
});

ipc('dotnet-diagnostics :: a runtime that never answers is given up on at the bound', async (ctx) => {
  const sockPath = join(ctx.dir, 'rt.sock');
  const { server, seen } = await fakeRuntime(sockPath, () => undefined);
  ctx.servers.push(server);
  const t0 = Date.now();
  const r = await requestDump(sockPath, '/x', 'Normal', 300);
  assert.match(!r.ok ? r.reason : '', /no reply within/);
  assert.ok(Date.now() - t0 < 10_000, 'bounded');
  assert.is(seen.length, 1, 'the request did arrive');
});

ipc(
  'dotnet-diagnostics :: no socket at that path, or a path too long for a message, is a reason, not a rejection',
  async (ctx) => {
    const r = await requestDump(join(ctx.dir, 'absent.sock'), '/x', 'Normal', 2000);
    assert.match(!r.ok ? r.reason : '', /the socket failed: ENOENT/);
    const long = await requestDump(join(ctx.dir, 'absent.sock'), `/${'x'.repeat(40_000)}`, 'Normal', 2000);
    assert.match(!long.ok ? long.reason : '', /cannot be sent: .*does not fit the uint16 size field/);
  },
);

/** A process (sleep) with its TMPDIR in the test folder, and a fake runtime socket where .NET would put its own. */
async function fakeDotnetProcess(ctx: { dir: string; servers: Server[]; pids: number[] }, answer: Answer) {
  const tmp = join(ctx.dir, 'tmp');
  await mkdir(tmp);
  const child = spawn('sleep', ['60'], { stdio: 'ignore', env: { ...process.env, TMPDIR: tmp } });
  const pid = child.pid ?? 0;
  ctx.pids.push(pid);
  const start = statFields(await readFile(`/proc/${pid}/stat`, 'utf8'))[19];
  const runtime = await fakeRuntime(join(tmp, `dotnet-diagnostic-${pid}-${start}-socket`), answer);
  ctx.servers.push(runtime.server);
  return { pid, ...runtime };
}

ipc('dotnet-diagnostics :: the socket is found in the process TMPDIR by pid and start time', async (ctx) => {
  const { pid } = await fakeDotnetProcess(ctx, () => undefined);
  const found = await findDiagnosticsSocket(pid);
  assert.match(found ?? '', new RegExp(`^/proc/${pid}/root${ctx.dir}/tmp/dotnet-diagnostic-${pid}-\\d+-socket$`));
  assert.is(await findDiagnosticsSocket(process.pid), null, 'node here has no .NET runtime');
});

ipc('dotnet-diagnostics :: dumpProcess asks the runtime first, resuming a stopped server', async (ctx) => {
  const { pid, seen } = await fakeDotnetProcess(ctx, (req, sock) => {
    void writeFile(req.path ?? '', 'core').then(() => sock.end(reply(0x00, u32(0))));
  });
  process.kill(pid, 'SIGSTOP');
  await waitFor('the process stopped', async () => (await processState(pid)) === 'T', 5000);
  const log = captureLog();
  const opts = { dumpsDir: join(ctx.dir, 'dumps'), type: 'Normal' as const, timeoutMs: 5000, log, searchPath: '' };
  const file = await dumpProcess(pid, { ...opts, program: join(ctx.dir, 'bin', 'x') });
  assert.ok(file, log.lines.join('\n'));
  assert.is(seen[0]?.path, file, 'the runtime was told where to write');
  assert.is(seen[0]?.dumpType, 1, 'Normal = 1');
  assert.ok(log.lines.some((l) => l.includes('dump written') && l.includes('"method":"diagnostics-ipc"')));
  assert.ok(log.lines.some((l) => l.includes('resumed it (SIGCONT)')));
  assert.is.not(await processState(pid), 'T', 'resumed so it could answer');
});

ipc('dotnet-diagnostics :: a refused IPC dump falls back to createdump, and the log says why', async (ctx) => {
  const { pid } = await fakeDotnetProcess(ctx, (_req, sock) =>
    sock.end(reply(0xff, Buffer.concat([u32(0x80004005), utf16('disk full')]))),
  );
  await mkdir(join(ctx.dir, 'bin'));
  const createdump = join(ctx.dir, 'bin', 'createdump');
  await writeFile(createdump, '#!/bin/sh\ntouch "$3"\n');
  await chmod(createdump, 0o755);
  const log = captureLog();
  const opts = { dumpsDir: join(ctx.dir, 'dumps'), type: 'Normal' as const, timeoutMs: 5000, log, searchPath: '' };
  const file = await dumpProcess(pid, { ...opts, program: join(ctx.dir, 'bin', 'Robust.Server') });
  assert.ok(file, log.lines.join('\n'));
  assert.ok(log.lines.some((l) => l.includes('dump written') && l.includes('"method":"createdump"')));
  assert.ok(log.lines.some((l) => l.includes('dumpers tried before it') && l.includes('disk full')));
});

ipc.run();
