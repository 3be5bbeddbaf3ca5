import * as assert from 'uvu/assert';
import { createBus } from '../../src/bus.ts';
import { loadConfig } from '../../src/config/load.ts';
import type { ResolvedConfig } from '../../src/config/resolved.ts';
import { hostNotifier } from '../../src/daemon/notifier-host.ts';
import { startJsonReceiver, startSlack } from '../_support/chat-services.ts';
import { tempSuite, waitFor } from '../_support/env.ts';
import { captureLog } from '../_support/recording-logger.ts';
import { oneInstance, writeFiles } from '../config/_support/files.ts';

const test = tempSuite('notify :: reload', { prefix: 'wd-notify-reload-' });

const configWith = async (dir: string, route: string): Promise<ResolvedConfig> => {
  await writeFiles(dir, {
    'appsettings.yml': oneInstance([], ['Notification:', '  Routes:', `    - { ${route}, Events: [crash] }`]),
  });
  const r = await loadConfig({ cwd: dir, env: {} });
  if (!r.ok) throw new Error(r.problems.join('\n'));
  return r.config;
};

test('reload :: a route moved from Json to Slack takes the next notice there, and the old one gets no more', async ({
  dir,
}) => {
  const json = await startJsonReceiver();
  const slack = await startSlack();
  const bus = createBus();
  const host = hostNotifier(await configWith(dir, `Json: "${json.url}"`), bus, captureLog());
  const crash = (message: string) =>
    bus.emit('instance:alert', { key: 'alpha', kind: 'crash', message, at: Date.now() });
  try {
    crash('first');
    await waitFor('the first notice, as JSON', () => json.received.length === 1);
    host.reconfigure(await configWith(dir, `Slack: "${slack.url}"`));
    crash('second');
    await waitFor('the second notice, in Slack', () => slack.received.length === 1);
    assert.match(slack.received[0]?.text ?? '', /\\nsecond/, 'the message in the JSON text');
    assert.is(json.received.length, 1, 'the old destination got no more');
    assert.equal([...json.rejected, ...slack.rejected], []);
  } finally {
    await host.stop();
    await json.close();
    await slack.close();
  }
});

test.run();
