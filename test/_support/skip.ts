/**
 * Suites that cannot run on this machine (no engine bundle, no .NET, no peer snapshot) still register every test,
 * as skipped, so the closing `uvu: N passed, N failed, K skipped` line counts them instead of hiding them.
 */
import { suite, type Test } from 'uvu';

/**
 * A uvu suite in which every `test(name, fn)` (and `.only`) is registered as skipped and every hook is a no-op: a
 * stand-in with the same shape as the suite it replaces, so a test file reads the same whether it runs or not.
 */
export function skippedSuite<C extends object = Record<never, never>>(name: string): Test<C> {
  const real = suite<C>(name);
  const skip = real.skip;
  const noop = Object.assign(() => {}, { each: () => {} });
  const t = ((testName: string) => skip(testName)) as unknown as Test<C>;
  return Object.assign(t, { before: noop, after: noop, only: skip, skip, run: real.run });
}
