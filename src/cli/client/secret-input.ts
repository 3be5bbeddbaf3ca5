import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { UsageError } from '../../errors.ts';

/** One line typed at the terminal, not echoed unless `echo` (readline then echoes to a stream that drops it). */
function prompt(question: string, echo = false): Promise<string> {
  const silent = new Writable({ write: (_chunk, _encoding, done) => done() });
  const rl = createInterface({ input: process.stdin, output: echo ? process.stderr : silent, terminal: true });
  // Echoed, readline draws the question itself (and again when the line is redrawn).
  if (!echo) process.stderr.write(question);
  return new Promise((resolve) =>
    rl.question(echo ? question : '', (answer) => {
      rl.close();
      if (!echo) process.stderr.write('\n');
      resolve(answer);
    }),
  );
}

/** A new password, from stdin or typed twice; never from argv, where other users of the host can read it. */
export async function readNewPassword(fromStdin: boolean, usage: string): Promise<string> {
  const password = await readPassword(fromStdin, usage, 'new password: ');
  if (!fromStdin && (await prompt('again: ')) !== password)
    throw new UsageError('the two passwords differ; nothing was changed');
  if (password.length < 8) throw new UsageError('a password needs at least 8 characters; nothing was changed');
  return password;
}

/** A password to check: all of stdin with `--password-stdin` (one trailing newline dropped), else typed once. */
export async function readPassword(fromStdin: boolean, usage: string, question = 'password: '): Promise<string> {
  if (fromStdin) return (await text(process.stdin)).replace(/\r?\n$/, '');
  if (process.stdin.isTTY) return prompt(question);
  throw new UsageError(`stdin is not a terminal: give the password with --password-stdin\n${usage}`);
}

/** One line typed at the terminal (`echo`: shown as typed, as a user name is); without one, a UsageError naming `instead`. */
export function readLine(question: string, instead: string, usage: string, echo = false): Promise<string> {
  if (!process.stdin.isTTY) throw new UsageError(`stdin is not a terminal: give ${instead}\n${usage}`);
  return prompt(question, echo);
}
