import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { UsageError } from '../../errors.ts';

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  return Buffer.concat(chunks).toString('utf8');
}

/** One line typed at a prompt on the terminal, not echoed: readline writes its echo to a stream that drops it. */
function prompt(question: string): Promise<string> {
  process.stderr.write(question);
  const silent = new Writable({ write: (_chunk, _encoding, done) => done() });
  const rl = createInterface({ input: process.stdin, output: silent, terminal: true });
  return new Promise((resolve) =>
    rl.once('line', (answer) => {
      rl.close();
      process.stderr.write('\n');
      resolve(answer);
    }),
  );
}

/**
 * A new password: all of stdin with `--password-stdin` (one trailing newline dropped), else typed twice at a
 * prompt when stdin is a terminal. Never from argv, where other users of the host can read it.
 */
export async function readNewPassword(fromStdin: boolean, usage: string): Promise<string> {
  let password: string;
  if (fromStdin) {
    password = (await readAll(process.stdin)).replace(/\r?\n$/, '');
  } else if (process.stdin.isTTY) {
    password = await prompt('new password: ');
    if ((await prompt('again: ')) !== password) throw new UsageError('the two passwords differ; nothing was changed');
  } else {
    throw new UsageError(`stdin is not a terminal: give the password with --password-stdin\n${usage}`);
  }
  if (password.length < 8) throw new UsageError('a password needs at least 8 characters; nothing was changed');
  return password;
}

/** A password to check: all of stdin with `--password-stdin` (one trailing newline dropped), else typed once. */
export async function readPassword(fromStdin: boolean, usage: string): Promise<string> {
  if (fromStdin) return (await readAll(process.stdin)).replace(/\r?\n$/, '');
  if (process.stdin.isTTY) return prompt('password: ');
  throw new UsageError(`stdin is not a terminal: give the password with --password-stdin\n${usage}`);
}
