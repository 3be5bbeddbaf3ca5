import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { UpdateError } from '../../src/errors.ts';
import { runChild } from '../../src/process/run-child.ts';
import { runChild as runGit } from '../../src/updates/git/repo.ts';

const run = suite('run-child');
const opts = { cwd: process.cwd(), env: process.env, signal: new AbortController().signal, timeoutMs: 5_000 };

run('run-child :: a failure is the caller’s kind of error: a plain Error here, an UpdateError for Git', async () => {
  const missing = 'wd-no-such-program-here';
  const plain = await runChild(missing, [], { ...opts, what: 'the copy' }).then(
    () => null,
    (err: unknown) => err,
  );
  assert.instance(plain, Error);
  assert.not.instance(plain, UpdateError);
  assert.match(String((plain as Error).message), /could not start the copy \(wd-no-such-program-here\)/);
  const git = await runGit(missing, [], { ...opts, what: 'git fetch' }).then(
    () => null,
    (err: unknown) => err,
  );
  assert.instance(git, UpdateError);
});

run('run-child :: only the time limit marks its error timedOut', async () => {
  const caught = (p: Promise<unknown>) =>
    p.then(
      () => null,
      (err: unknown) => err as Error,
    );
  const slow = await caught(runChild('sleep', ['30'], { ...opts, timeoutMs: 200, what: 'the sleep' }));
  assert.match(String(slow?.message), /the sleep took longer than 0.2 s and was stopped/);
  assert.is((slow as { timedOut?: boolean }).timedOut, true);
  const missing = await caught(runChild('wd-no-such-program-here', [], { ...opts, what: 'the copy' }));
  assert.ok(missing?.cause);
  assert.not.ok(missing && 'timedOut' in missing);
});

run.run();
