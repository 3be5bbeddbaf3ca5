/**
 * `watchdog start --inspect` with the real daemon: the page for the Stately inspector on 127.0.0.1, and the relay
 * behind it that a browser (here a WebSocket client, as the page's own script is) receives the instance actor's
 * inspection events from, kept ones first, then live ones; the check-in secret in the actor's context never leaves.
 */
import { readFileSync } from 'node:fs';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { WebSocket } from 'ws';
import { testConfig } from '../_support/config.ts';
import { startDaemon, waitState } from '../_support/daemon.ts';
import { freePort, waitFor } from '../_support/env.ts';

const test = suite('e2e :: the Stately inspector');
const TOKEN = 'tok';

interface Relayed {
  type: string;
  name?: string;
  event?: { type?: string };
  snapshot?: { value?: unknown; context?: Record<string, unknown> };
}

test('inspector :: --inspect serves the page on 127.0.0.1 and relays the instance actor, its secret hidden', async () => {
  const d = await startDaemon(testConfig({ instances: [{ key: 'insp', port: await freePort() }] }), {
    args: ['--inspect', '--inspect-port', '0'],
  });
  let ws: WebSocket | undefined;
  try {
    const url = /inspector: open (http:\/\/127\.0\.0\.1:\d+\/)/.exec(d.log())?.[1];
    assert.ok(url, `the page is printed at start:\n${d.log()}`);
    const page = await fetch(url);
    assert.is(page.status, 200);
    const html = await page.text();
    assert.match(html, 'https://stately.ai/inspect', 'the page embeds the inspector UI');
    assert.match(html, url.replace('http://', 'ws://').replace(/\/$/, ''), 'and reads the relay beside it');

    const running = await waitState(d, 'insp', TOKEN, 'server.running');
    const relayed: Relayed[] = [];
    const texts: string[] = [];
    ws = new WebSocket(url.replace('http://', 'ws://'));
    ws.on('message', (m: Buffer) => {
      texts.push(m.toString());
      relayed.push(JSON.parse(m.toString()) as Relayed);
    });
    await waitFor('the instance actor, kept for a late page', () =>
      relayed.some((e) => e.type === '@xstate.actor' && e.name === 'instance'),
    );
    assert.ok(await d.control('insp', TOKEN, 'restart'));
    await waitFor('the restart, live', () =>
      relayed.some((e) => e.type === '@xstate.event' && e.event?.type === 'RESTART'),
    );
    await waitState(d, 'insp', TOKEN, 'server.running', { notPid: running.pid });
    await waitFor('a snapshot of the relaunched server checking in', () =>
      relayed.some((e) => e.type === '@xstate.snapshot' && e.event?.type === 'CHECKIN'),
    );

    const contexts = relayed.flatMap((e) => (e.snapshot?.context ? [e.snapshot.context] : []));
    assert.ok(contexts.length > 0, 'snapshots carry the context');
    assert.ok(
      contexts.every((c) => c.secret === '[hidden]'),
      'the secret is hidden in every context',
    );
    // The relaunched server's own secret (its environment), nowhere in what was relayed.
    const now = await d.status('insp', TOKEN);
    const environ = readFileSync(`/proc/${now.pid}/environ`, 'utf8').split('\0');
    const secret = environ.find((v) => v.startsWith('ROBUST_CVAR_watchdog__token='))?.split('=')[1];
    assert.ok(secret && secret.length >= 16, 'the server was given a secret');
    assert.not.ok(
      texts.some((t) => t.includes(secret)),
      `the secret never reaches the inspector: ${texts
        .filter((t) => t.includes(secret))
        .map((t) => t.replace(secret, '<SECRET>').slice(0, 600))
        .join('\n')}`,
    );
  } finally {
    ws?.terminate();
    await d.stop();
    await d.cleanup();
  }
});

test.run();
