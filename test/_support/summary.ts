// uvu prints Total/Passed/Skipped but never "N failed", and swallows errors thrown in hooks
// (lukeed/uvu#80, #191): tee stdout, derive failures, and print the plain closing line CI reads.
const chunks: string[] = [];
const write = process.stdout.write.bind(process.stdout);
process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
  chunks.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
  return (write as (c: string | Uint8Array, ...r: unknown[]) => boolean)(chunk, ...rest);
}) as typeof process.stdout.write;

process.on('exit', (code) => {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: ESC starts the ANSI sequences this strips
  const out = chunks.join('').replace(/\x1b\[[0-9;]*m/g, '');
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
  const failed = total - passed - skipped;
  write(`uvu: ${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  if (failed > 0 || total === 0 || code !== 0) process.exitCode = process.exitCode || 1;
});
