import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { testConfig } from '../../_support/config.ts';
import { daemonSuite } from '../../_support/daemon.ts';
import { freePort, waitFor } from '../../_support/env.ts';
import { fixture } from '../../_support/fixtures.ts';
import { killGroup, running, waitStatus } from '../resilience/_support/daemon-crash.ts';

/** A damaged data.json is set aside with a warning, never a crash. */
const DAMAGE = {
  truncated: '{\n  "version": 1,\n  "updateType": null,\n  "revision": "abc",\n  "launch": {\n    "pid": 12',
  garbage: '\u0000\u0001\u00ffnot json at all \u001b[31m',
  // Valid JSON, wrong shape: the same treatment.
  wrongshape: '[1, 2, 3]',
} as const;
type Kind = keyof typeof DAMAGE;

const test = daemonSuite('e2e :: faults: data.json truncated or garbage', {
  prefix: 'wd-datajson-',
  ctx: { pids: [] as number[] },
  config: async (ctx) => {
    for (const [key, text] of Object.entries(DAMAGE)) {
      await mkdir(join(ctx.dir, 'instances', key), { recursive: true });
      await writeFile(join(ctx.dir, 'instances', key, 'data.json'), text);
    }
    const instances = [];
    for (const key of Object.keys(DAMAGE))
      instances.push({ key, port: await freePort(), runCommand: fixture('echo-env.mjs') });
    return testConfig({ instances });
  },
  after: (ctx) => ctx.pids.forEach(killGroup),
});

for (const kind of Object.keys(DAMAGE) as Kind[]) {
  test(`data-json :: ${kind}: set aside as data.json.corrupt-*, the instance runs and records its launch in a new data.json`, async (ctx) => {
    const d = ctx.daemon!;
    const s = await waitStatus(d, kind, 'tok', 'server.running', running);
    ctx.pids.push(s.pid!);
    const dir = join(ctx.dir, 'instances', kind);
    const aside = (await readdir(dir)).filter((n) => n.startsWith('data.json.corrupt-'));
    assert.is(aside.length, 1, 'set aside once');
    assert.is(await readFile(join(dir, aside[0]!), 'utf8'), DAMAGE[kind], 'kept as it was, for a person to look at');
    assert.match(d.log(), new RegExp(`\\[watchdog:${kind}\\] data\\.json was corrupt; set it aside`));
    // Recorded just after the launch: wait for the write rather than race it.
    await waitFor(
      'a valid data.json with the new launch',
      async () => {
        const fresh = JSON.parse(await readFile(join(dir, 'data.json'), 'utf8')) as { launch: { pid: number } | null };
        return fresh.launch?.pid === s.pid;
      },
      5000,
    );
  });
}

test.run();
