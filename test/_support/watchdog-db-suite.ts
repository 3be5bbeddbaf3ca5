import { join } from 'node:path';
import { tempSuite } from './env.ts';

/** A temp-folder suite with `file`, where a test writes the real watchdog's data.db (not created up front). */
export const watchdogDbSuite = (name: string, prefix: string) =>
  tempSuite(name, {
    prefix,
    ctx: { file: '' },
    before: (ctx) => {
      ctx.file = join(ctx.dir, 'data.db');
    },
  });
