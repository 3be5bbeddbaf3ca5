/** appsettings.yml text for bench daemons: loopback on a free port, light servers, dumps off. */

export const TOKEN = 'bench-token';

export interface LightInstance {
  key: string;
  port: number;
}

export function lightConfig(opts: {
  script: string;
  instances: LightInstance[];
  checkinSeconds: number;
  timeoutSeconds: number;
  /** Extra lines under Timing (each "Key: value"). */
  timing?: string[];
  /** Extra lines inside each instance (6-space indented by the caller's text). */
  instanceExtra?: string[];
  port?: number;
}): string {
  const lines = [`Urls: http://127.0.0.1:${opts.port ?? 0}`];
  if (opts.timing?.length) lines.push('Timing:', ...opts.timing.map((t) => `  ${t}`));
  lines.push('Servers:', '  Instances:');
  for (const i of opts.instances) {
    lines.push(
      `    ${i.key}:`,
      `      ApiToken: ${TOKEN}`,
      `      ApiPort: ${i.port}`,
      `      RunCommand: ${JSON.stringify(opts.script)}`,
      `      TimeoutSeconds: ${opts.timeoutSeconds}`,
      '      DumpOnTimeout: false',
      `      Arguments: ["--cvar", "net.port=${i.port}", "--cvar", "watchdog.checkin_interval=${opts.checkinSeconds}"]`,
      ...(opts.instanceExtra ?? []).map((l) => `      ${l}`),
    );
  }
  return lines.join('\n') + '\n';
}

export function instanceKeys(count: number, prefix = 's'): string[] {
  const width = String(count - 1).length;
  return Array.from({ length: count }, (_, i) => `${prefix}${String(i).padStart(width, '0')}`);
}
