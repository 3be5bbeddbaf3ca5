// uvu prints Total/Passed/Skipped but never "N failed", and swallows errors thrown in hooks
// (lukeed/uvu#80, #191): tee stdout, derive failures, and print the plain closing line CI reads. It also notes
// when uvu names each file, and prints the slowest files at the end: npm test has a time budget to keep.
const chunks: string[] = [];
const files: Array<{ name: string; at: number }> = [];
// biome-ignore lint/suspicious/noControlCharactersInRegex: ESC starts the ANSI sequences this strips
const plain = (text: string) => text.replace(/\x1b\[[0-9;]*m/g, '');
const write = process.stdout.write.bind(process.stdout);
process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
  const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
  chunks.push(text);
  const file = /^(\S+\.test\.ts)\n?$/.exec(plain(text));
  if (file?.[1]) files.push({ name: file[1], at: performance.now() });
  return (write as (c: string | Uint8Array, ...r: unknown[]) => boolean)(chunk, ...rest);
}) as typeof process.stdout.write;

/** The ten slowest test files, from one file's name to the next (the last to the exit). */
function slowest(): string {
  const now = performance.now();
  const took = files.map((f, i) => ({ name: f.name, s: ((files[i + 1]?.at ?? now) - f.at) / 1000 }));
  took.sort((a, b) => b.s - a.s);
  return took
    .slice(0, 10)
    .map((f) => `  ${f.s.toFixed(1).padStart(6)} s  ${f.name}`)
    .join('\n');
}

process.on('exit', (code) => {
  const out = plain(chunks.join(''));
  if (files.length > 1) write(`slowest test files:\n${slowest()}\n`);
  const num = (label: string): number | undefined => {
    const m = out.match(new RegExp(`${label}:\\s+(\\d+)`));
    return m ? Number(m[1]) : undefined;
  };
  const total = num('Total');
  const passed = num('Passed');
  const skipped = num('Skipped') ?? 0;
  if (total === undefined || passed === undefined) {
    process.stderr.write('uvu printed no summary: a test file crashed while loading (see above)\n');
    write(`uvu: ${passed ?? 0} passed, 1 failed, ${skipped} skipped\n`);
    process.exitCode = 1;
    return;
  }
  // uvu's Total counts the tests that ran: skipped ones are not in it. A run with every test skipped (a suite
  // that cannot run on this machine) is not an empty run.
  const failed = total - passed;
  write(`uvu: ${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  if (failed > 0 || total + skipped === 0 || code !== 0) process.exitCode = process.exitCode || 1;
});
