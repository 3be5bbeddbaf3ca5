import * as assert from 'uvu/assert';

/** Asserts that `fn` throws an instance of `type` whose message matches `message`, and returns that error. */
export function assertThrowsWith<E extends Error>(
  fn: () => unknown,
  type: abstract new (...args: never[]) => E,
  message: RegExp,
): E {
  try {
    fn();
  } catch (err) {
    assert.instance(err, type);
    assert.match((err as Error).message, message);
    return err as E;
  }
  assert.unreachable('should throw');
  throw new Error('unreachable');
}
