/**
 * `MemoryLimitMB`: a demo server whose process tree passes the limit is asked to restart by its
 * `Maintenance.When` through the maintenance machinery, once per run, and chat hears why. `When: Empty` with a UDP
 * player on keeps the restart waiting, so the test sees several samples of one run ask only once. The limit comes
 * in by a reload once the player is on the running server: set from the start, a run could be restarted empty
 * before the join landed, and the join land on that run while it stopped.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { MaintenanceStatus, ResourceStatus } from '../../src/supervisor/status.ts';
import { testConfig } from '../_support/config.ts';
import { waitState, withDaemons } from '../_support/daemon.ts';
import { udpPlayer } from '../_support/demo.ts';
import { freePort, waitFor } from '../_support/env.ts';

const test = suite('e2e :: a server over MemoryLimitMB restarts by its policy');
const TOKEN = 'tok';
const SAMPLE_SECONDS = 0.2;

test('memory-limit :: over the limit: a restart pending for 0 players, asked once per run, said in chat; done when empty', () =>
  withDaemons({ webhook: true }, async ({ hook, start }) => {
    const port = await freePort();
    const yaml = testConfig({
      webhook: hook!.url,
      extra: `  ResourceSampleSeconds: ${SAMPLE_SECONDS}\n  MaintenancePollSeconds: ${SAMPLE_SECONDS}`,
      // No server comes near 100 GB; any node server is over the 1 MB the reload sets.
      instances: [{ port, extra: '      MemoryLimitMB: 100000\n      Maintenance:\n        When: Empty' }],
    });
    const d = await start(yaml);
    const player = await udpPlayer(port);
    try {
      await waitFor(
        'alice on the server',
        () =>
          player.send('join alice', 200).then(
            (r) => (r === 'welcome alice' ? true : undefined),
            () => undefined,
          ),
        20_000,
        100,
      );
      const first = await waitState(d, 'demo', TOKEN, 'server.running');
      assert.is(await player.send('ping'), 'pong 1', 'alice on the running server');
      const settings = join(d.dir, 'appsettings.yml');
      await writeFile(
        settings,
        (await readFile(settings, 'utf8')).replace('MemoryLimitMB: 100000', 'MemoryLimitMB: 1'),
      );
      const reloadFrom = d.log().length;
      d.proc.kill('SIGHUP');
      await waitFor('the reload', () => /configuration reloaded/.test(d.log().slice(reloadFrom)), 10_000);
      const status = async () =>
        (await d.status('demo', TOKEN)) as unknown as {
          pid: number | null;
          maintenance: MaintenanceStatus;
          resources?: ResourceStatus | null;
        };
      const pending = await waitFor('the memory restart pending', async () => {
        const s = await status();
        return s.maintenance.pending ? s.maintenance.pending : undefined;
      });
      assert.is(pending.action, 'restart');
      assert.is(pending.when, 'Empty');
      assert.ok(Date.parse(pending.deadline) > Date.now(), 'with a deadline ahead');
      const notice = await waitFor('the chat notice', () =>
        hook!.messages.find((m) => m.content.includes('MemoryLimitMB')),
      );
      assert.match(
        notice.content,
        /`demo` will restart \(memory \d+(\.\d)? MB over MemoryLimitMB 1\) as soon as no players are on/,
      );

      // Many samples of the same run go by with alice on: asked once, and the same server runs.
      const told = hook!.messages.filter((m) => m.content.includes('MemoryLimitMB')).length;
      const samples = new Set<string>();
      await waitFor(
        'eight samples of the same run',
        async () => {
          const s = await status();
          if (s.pid !== first.pid) return true; // restarted with alice on: the assertions below say so
          if (s.resources) samples.add(s.resources.at);
          return samples.size >= 8;
        },
        20_000,
        50,
      );
      const lines = d
        .log()
        .split('\n')
        .filter((l) => /over MemoryLimitMB 1; restarting it/.test(l) && l.endsWith(`pid=${first.pid}`));
      assert.is(lines.length, 1, lines.join('\n'));
      assert.is((await status()).pid, first.pid);
      assert.is(hook!.messages.filter((m) => m.content.includes('MemoryLimitMB')).length, told, 'told once per run');

      // Alice leaves: the restart is carried out; the new run is over the limit too, and is asked again (its own run).
      const from = d.log().length;
      assert.is(await player.send('leave'), 'bye');
      await waitState(d, 'demo', TOKEN, 'server.running', { notPid: first.pid, timeoutMs: 20_000 });
      await waitFor('the next run asked too', () =>
        d
          .log()
          .slice(from)
          .split('\n')
          .some((l) => /over MemoryLimitMB 1; restarting it/.test(l))
          ? true
          : undefined,
      );
    } finally {
      await player.close().catch(() => undefined);
      // The limit would restart it for ever: stop it before the daemon goes.
      await d.control('demo', TOKEN, 'stop');
    }
  }));

test.run();
