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

run.run();
