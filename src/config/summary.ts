import { displayName } from './layers.ts';
import { type ListenAddress, listenUrl } from './listen.ts';
import type { ResolvedConfig } from './resolved.ts';

function hostPort(listen: ListenAddress): string {
  const all = listen.host === '*' ? ' (all interfaces)' : listen.host === '0.0.0.0' ? ' (all IPv4 interfaces)' : '';
  return `${listenUrl(listen)}${all}`;
}

/** A short, human summary of a valid configuration: what was read, where it listens, each instance. */
export function formatSummary(config: ResolvedConfig, cwd: string): string {
  const lines = [
    `files:     ${config.files.map((f) => displayName(f, cwd)).join(', ')}`,
    `listen:    ${config.listen.map(hostPort).join(', ')}`,
    `base url:  ${config.baseUrl ?? '(derived from the listen address)'}`,
    `log level: ${config.logLevel}`,
    `webhook:   ${config.webhook ? 'set' : 'none'} (Notification.ChatWebhook, or the real watchdog's DiscordWebhook)`,
    `routes:    ${config.settings.Notification.Routes.length} (Notification.Routes); format ${config.settings.Notification.Format} (Notification.Format)`,
    `agones:    ${
      config.agones
        ? `on: wraps the one instance for its GameServer (SDK server port ${config.agones.port}, /health every ${config.agones.healthSeconds} s)`
        : 'off (Agones.Enabled, or AGONES_SDK_HTTP_PORT in the environment)'
    }`,
    `instances: ${config.instances.length}`,
  ];
  for (const i of config.instances) {
    const s = i.settings;
    lines.push(
      `  ${i.key}${i.name === i.key ? '' : ` (${JSON.stringify(i.name)})`}`,
      `    update type: ${s.UpdateType === 'CiServer' ? "CiServer (the real watchdog's Jenkins)" : (s.UpdateType ?? 'none')}`,
      `    api port:    ${s.ApiPort}`,
      `    timeout:     ${s.TimeoutSeconds} s`,
      `    program:     ${i.program}`,
      `    folder:      ${i.dir}`,
      `    api token:   ${i.apiToken ? 'set' : 'none (control requests refused)'}`,
    );
  }
  return lines.join('\n') + '\n';
}
