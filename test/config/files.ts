import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Writes each `name → text` into `dir` (text lines joined with "\n"). */
export async function writeFiles(dir: string, files: Record<string, string | string[]>): Promise<void> {
  for (const [name, text] of Object.entries(files)) {
    await writeFile(join(dir, name), Array.isArray(text) ? `${text.join('\n')}\n` : text);
  }
}

/** A minimal valid appsettings.yml body, with extra lines under the instance `alpha`. */
export function oneInstance(extra: string[] = [], top: string[] = []): string[] {
  return [...top, 'Servers:', '  Instances:', '    alpha:', '      ApiPort: 1212', ...extra.map((l) => `      ${l}`)];
}
