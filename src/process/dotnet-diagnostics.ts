/**
 * A client for the .NET runtime's diagnostics IPC (dotnet/diagnostics' ipc-protocol.md), enough to ask a .NET process
 * for a dump of itself as `DiagnosticsClient.WriteDump` does for the real SS14.Watchdog: one command per connection,
 * one reply (the Server set: OK or Error with an HRESULT, and since GenerateCoreDump3 a message).
 */
import { createConnection } from 'node:net';
import { monotonicMs } from '../clock.ts';
import { DUMP_TYPES } from '../config/schema.ts';

const MAGIC = Buffer.from('DOTNET_IPC_V1\0', 'latin1');
export const HEADER_SIZE = 20;
const DUMP_SET = 0x01;
const SERVER_SET = 0xff;
const SERVER_OK = 0x00;
const SERVER_ERROR = 0xff;
/** GenerateCoreDump3 (runtime 8+: error replies carry a message), then 2 (6+: flags), then the original 1. */
const DUMP_COMMANDS = [0x03, 0x02, 0x01] as const;
/** The runtime's answer to a command id it does not know: try the older one. */
export const E_UNKNOWN_COMMAND = 0x80131385;

/** `TimeoutDumpType`: what the dump holds (the runtime's MINIDUMP_TYPE levels, 1 to 4 in this order). */
export type DumpType = (typeof DUMP_TYPES)[number];

/** What a dump request came to: `ok`, or why not, with the runtime's HRESULT when it sent one. */
export type IpcDumpResult = { ok: true; command: number } | { ok: false; reason: string; hresult?: number };

interface IpcReply {
  commandSet: number;
  commandId: number;
  payload: Buffer;
}

export function encodeMessage(commandSet: number, commandId: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const size = HEADER_SIZE + payload.length;
  if (size > 0xffff) throw new RangeError(`an IPC message of ${size} bytes does not fit the uint16 size field`);
  const header = Buffer.alloc(HEADER_SIZE);
  MAGIC.copy(header, 0);
  header.writeUInt16LE(size, 14);
  header.writeUInt8(commandSet, 16);
  header.writeUInt8(commandId, 17);
  return Buffer.concat([header, payload]);
}

/** Reads a protocol `string` (uint32 length in UTF-16 units with the NUL, then the units); null when short. */
export function decodeString(buf: Buffer, offset: number): string | null {
  if (buf.length < offset + 4) return null;
  const units = buf.readUInt32LE(offset);
  const end = offset + 4 + units * 2;
  if (units === 0) return '';
  if (buf.length < end) return null;
  return buf.toString('utf16le', offset + 4, end).replace(/\0$/, '');
}

function decodeReply(buf: Buffer): IpcReply | string {
  if (buf.length < HEADER_SIZE) return `a short reply (${buf.length} bytes, a header is ${HEADER_SIZE})`;
  if (!buf.subarray(0, MAGIC.length).equals(MAGIC)) return 'a reply without the DOTNET_IPC_V1 magic';
  const size = buf.readUInt16LE(14);
  if (size < HEADER_SIZE) return `a reply whose header gives a size of ${size}`;
  if (buf.length < size) return `a short reply (${buf.length} of the ${size} bytes its header announces)`;
  return { commandSet: buf.readUInt8(16), commandId: buf.readUInt8(17), payload: buf.subarray(HEADER_SIZE, size) };
}

/**
 * Sends one message on a fresh connection and reads the one reply. Resolves the reply, or a sentence saying why
 * there is none (connect error, the runtime closed early, nothing within `timeoutMs`); never rejects.
 */
export function exchange(socketPath: string, message: Buffer, timeoutMs: number): Promise<IpcReply | string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let got = 0;
    let done = false;
    const sock = createConnection(socketPath);
    const finish = (r: IpcReply | string) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      sock.destroy();
      resolve(r);
    };
    const timer = setTimeout(() => finish(`no reply within ${timeoutMs} ms`), Math.max(0, timeoutMs));
    sock.on('connect', () => sock.write(message));
    sock.on('data', (d: Buffer) => {
      chunks.push(d);
      got += d.length;
      if (got < HEADER_SIZE) return;
      const all = Buffer.concat(chunks);
      const size = all.readUInt16LE(14);
      if (got >= size || size < HEADER_SIZE) finish(decodeReply(all));
    });
    sock.on('error', (err: NodeJS.ErrnoException) => finish(`the socket failed: ${err.code ?? err.message}`));
    sock.on('close', () =>
      finish(got === 0 ? 'the runtime closed the connection without a reply' : decodeReply(Buffer.concat(chunks))),
    );
  });
}

function dumpOutcome(reply: IpcReply | string, command: number): IpcDumpResult {
  if (typeof reply === 'string') return { ok: false, reason: reply };
  if (reply.commandSet !== SERVER_SET)
    return { ok: false, reason: `an unexpected reply (command set ${reply.commandSet})` };
  const hr = reply.payload.length >= 4 ? reply.payload.readUInt32LE(0) : undefined;
  if (reply.commandId === SERVER_OK) {
    // OK carries the dump's HRESULT; an OK with a failure code is still a failure.
    if (hr !== undefined && hr !== 0)
      return { ok: false, reason: `the runtime answered HRESULT 0x${hex(hr)}`, hresult: hr };
    return { ok: true, command };
  }
  if (reply.commandId === SERVER_ERROR) {
    const message = command === 0x03 ? decodeString(reply.payload, 4) : null;
    const code = hr === undefined ? 'an error without a code' : `HRESULT 0x${hex(hr)}`;
    return { ok: false, reason: message ? `${message.trim()} (${code})` : `the runtime refused: ${code}`, hresult: hr };
  }
  return { ok: false, reason: `an unexpected reply (command id ${reply.commandId})` };
}

const hex = (n: number) => n.toString(16).toUpperCase().padStart(8, '0');

/**
 * Asks the runtime listening on `socketPath` to write a dump of its process to `dumpPath` (a path as the target
 * process sees it), trying the newest dump command first and an older one when the runtime does not know it, as
 * the diagnostics client library does. The whole exchange, dump included, is bounded by `timeoutMs`.
 */
export async function requestDump(
  socketPath: string,
  dumpPath: string,
  type: DumpType,
  timeoutMs: number,
): Promise<IpcDumpResult> {
  const deadline = monotonicMs() + timeoutMs;
  // CreateCoreDump's payload: the path as a protocol string, the dump type and flags 0 (no logging to the target's
  // console, no crash report).
  const path = Buffer.from(`${dumpPath}\0`, 'utf16le');
  const payload = Buffer.alloc(4 + path.length + 8);
  payload.writeUInt32LE(path.length / 2, 0);
  path.copy(payload, 4);
  payload.writeUInt32LE(DUMP_TYPES.indexOf(type) + 1, 4 + path.length);
  try {
    encodeMessage(DUMP_SET, DUMP_COMMANDS[0], payload);
  } catch (err) {
    return { ok: false, reason: `the request cannot be sent: ${(err as Error).message}` };
  }
  let last: IpcDumpResult = { ok: false, reason: 'no dump command was tried' };
  for (const command of DUMP_COMMANDS) {
    const left = deadline - monotonicMs();
    if (left <= 0) return { ok: false, reason: `no reply within ${timeoutMs} ms` };
    last = dumpOutcome(await exchange(socketPath, encodeMessage(DUMP_SET, command, payload), left), command);
    if (last.ok || last.hresult !== E_UNKNOWN_COMMAND) return last;
  }
  return last;
}
