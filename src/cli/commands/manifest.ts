// Placeholder until this command lands; it says so instead of pretending.
export async function run(_args: string[]): Promise<number> {
  process.stderr.write('watchdog manifest: not built yet\n');
  return 1;
}
