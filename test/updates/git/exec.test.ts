import { PassThrough } from 'node:stream';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runChecked, runChild } from '../../../src/updates/git/repo.ts';
import { waitFor } from '../../_support/env.ts';
import { never, processGone, rejects } from '../_support/instance-suite.ts';

const exec = suite('git-exec');
const base = () => ({
  cwd: process.cwd(),
  env: process.env,
  signal: never(),
  timeoutMs: 10_000,
  what: 'the test command',
});

exec('git-exec :: output goes to the sink and the tail; stdout is captured on request', async () => {
  const sink = new PassThrough();
  const chunks: Buffer[] = [];
  sink.on('data', (c: Buffer) => chunks.push(c));
  const result = await runChild('sh', ['-c', 'echo out; echo err >&2; exit 4'], {
    ...base(),
    sink,
    captureStdout: true,
  });
  assert.is(result.code, 4);
  assert.is(result.stdout, 'out\n');
  assert.match(result.tail, /out/);
  assert.match(result.tail, /err/);
  assert.match(Buffer.concat(chunks).toString(), /err/);
  await rejects(
    runChecked('sh', ['-c', 'echo "what went wrong"; exit 4'], { ...base(), logHint: '/x/build.log' }),
    /the test command exited with code 4; its output ended with:\nwhat went wrong\n\(full output in \/x\/build\.log\)/,
  );
});

exec('git-exec :: a grandchild holding the pipes open does not hang the run', async () => {
  const started = Date.now();
  const result = await runChild('sh', ['-c', 'sleep 20 & echo $!'], { ...base(), captureStdout: true });
  assert.is(result.code, 0);
  assert.ok(Date.now() - started < 10_000);
  const straggler = Number(result.stdout.trim());
  process.kill(straggler, 'SIGKILL');
});

exec('git-exec :: time limit and cancellation stop the whole process group', async () => {
  const slow = runChild('sh', ['-c', 'sleep 30 & echo $!; wait'], { ...base(), timeoutMs: 300, captureStdout: true });
  await rejects(slow, /took longer than 0.3 s and was stopped/);

  const ac = new AbortController();
  let pid = 0;
  const sink = new PassThrough();
  sink.on('data', (c: Buffer) => {
    pid = Number(c.toString().trim()) || pid;
  });
  const cancelled = runChild('sh', ['-c', 'sleep 30 & echo $!; wait'], { ...base(), signal: ac.signal, sink });
  await waitFor('the background sleep', () => pid > 0);
  ac.abort();
  await rejects(cancelled, /cancelled/);
  await waitFor('the grandchild to be killed', () => processGone(pid));
});

exec('git-exec :: a program that cannot start is an UpdateError', async () => {
  await rejects(runChild('/nonexistent/program', [], base()), /could not start the test command/);
});

exec.run();
