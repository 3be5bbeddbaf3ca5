/**
 * Fuzzing how server output becomes log lines (src/process/log-file.ts `LineSplitter`, which `watchdog logs -f`
 * and `GET /instances/:key/logs?follow=1` read through): a byte stream cut into chunks anywhere (inside a UTF-8
 * character, between `\r` and `\n`) gives the same lines as the whole stream at once, and the same lines as the
 * text itself split at its line ends.
 */
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { LineSplitter } from '../../src/process/log-file.ts';
import { fuzz } from './_support/fuzz.ts';

/** Output as servers write it: text in any script, CRLF and LF line ends, empty lines, an unterminated tail. */
const output = fc
  .array(
    fc.oneof(
      fc.string({ unit: 'grapheme', maxLength: 30 }),
      fc.constantFrom('\n', '\r\n', '\r', '', 'é', '🙂', '\u0000', '日本語'),
    ),
    { maxLength: 20 },
  )
  .map((parts) => parts.join(''));

/** Lines of `text` as a reader of the whole file sees them: split at `\n`, one `\r` before it dropped. */
function expectedLines(text: string): { lines: string[]; rest: string | null } {
  const parts = text.split('\n');
  const rest = parts.pop() ?? '';
  return { lines: parts.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l)), rest: rest === '' ? null : rest };
}

function split(bytes: Buffer, cuts: number[]): { lines: string[]; rest: string | null } {
  const splitter = new LineSplitter();
  const lines: string[] = [];
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    lines.push(...splitter.push(bytes.subarray(from, cut)));
    from = cut;
  }
  return { lines, rest: splitter.flush() };
}

const lines = suite('fuzz/log lines');

lines('fuzz/log :: lines do not depend on where the output was cut into chunks', async () => {
  await fuzz(
    'log/line-splitter',
    fc.property(output, fc.array(fc.nat(), { maxLength: 6 }), (text, rawCuts) => {
      const bytes = Buffer.from(text, 'utf8');
      const cuts = [...new Set(rawCuts.map((n) => n % (bytes.length + 1)))].sort((a, b) => a - b);
      assert.equal(split(bytes, cuts), expectedLines(text), `cut at ${JSON.stringify(cuts)}`);
    }),
    { seed: 0x109_01, numRuns: 3000 },
  );
});

lines.run();
