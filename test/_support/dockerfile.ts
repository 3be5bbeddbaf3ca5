/**
 * Just enough of a Dockerfile reader for the image test: the stages, and of the final one the settings a
 * container starts with (ENV, WORKDIR, USER, ENTRYPOINT, CMD, HEALTHCHECK). Exec-form (JSON) ENTRYPOINT, CMD
 * and HEALTHCHECK only, and `ENV KEY=value` pairs; anything else in those instructions is an error here rather
 * than a silently different process.
 */

export interface Stage {
  /** `FROM <image> [AS <name>]`. */
  from: string;
  name?: string;
  /** Each instruction after FROM, continuation lines joined: `{ op: 'RUN', args: 'npm ci …' }`. */
  instructions: { op: string; args: string }[];
}

export interface FinalStage {
  env: Record<string, string>;
  workdir: string;
  user: string | undefined;
  entrypoint: string[];
  cmd: string[];
  /** The HEALTHCHECK's command, exec form. */
  healthcheck: string[] | undefined;
}

/** The stages in order, comments and blank lines dropped, `\` continuations joined. */
export function parseStages(text: string): Stage[] {
  const logical: string[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (pending === '' && (line === '' || line.startsWith('#'))) continue;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    logical.push(pending + line);
    pending = '';
  }
  const stages: Stage[] = [];
  for (const line of logical) {
    const m = /^(\S+)\s*(.*)$/.exec(line);
    if (!m) continue;
    const op = (m[1] ?? '').toUpperCase();
    const args = m[2] ?? '';
    if (op === 'FROM') {
      const [from = '', as, name] = args.split(/\s+/);
      stages.push({ from, ...(as?.toUpperCase() === 'AS' && name ? { name } : {}), instructions: [] });
    } else if (op !== 'ARG' || stages.length > 0) {
      const stage = stages.at(-1);
      if (!stage) throw new Error(`Dockerfile: ${op} before the first FROM`);
      stage.instructions.push({ op, args });
    }
  }
  return stages;
}

function execForm(op: string, args: string): string[] {
  const parsed: unknown = JSON.parse(args);
  if (!Array.isArray(parsed) || !parsed.every((a) => typeof a === 'string')) {
    throw new Error(`Dockerfile: ${op} must be in exec form (a JSON array of strings), got ${args}`);
  }
  return parsed;
}

/** `KEY=value KEY2="value two"` (the only ENV form read here). */
function envPairs(args: string): [string, string][] {
  const pairs: [string, string][] = [];
  const re = /([A-Za-z_][A-Za-z0-9_]*)=("(?:[^"\\]|\\.)*"|\S*)\s*/gy;
  let m: RegExpExecArray | null = re.exec(args);
  while (m) {
    const value = m[2] ?? '';
    pairs.push([m[1] ?? '', value.startsWith('"') ? (JSON.parse(value) as string) : value]);
    if (re.lastIndex >= args.length) return pairs;
    m = re.exec(args);
  }
  throw new Error(`Dockerfile: ENV must be KEY=value pairs, got ${args}`);
}

/** What a container of the final stage starts with. */
export function finalStage(stages: Stage[]): FinalStage {
  const last = stages.at(-1);
  if (!last) throw new Error('Dockerfile: no FROM');
  const out: FinalStage = { env: {}, workdir: '/', user: undefined, entrypoint: [], cmd: [], healthcheck: undefined };
  for (const { op, args } of last.instructions) {
    if (op === 'ENV') for (const [k, v] of envPairs(args)) out.env[k] = v;
    else if (op === 'WORKDIR') out.workdir = args.startsWith('/') ? args : `${out.workdir.replace(/\/$/, '')}/${args}`;
    else if (op === 'USER') out.user = args;
    else if (op === 'ENTRYPOINT') out.entrypoint = execForm(op, args);
    else if (op === 'CMD') out.cmd = execForm(op, args);
    else if (op === 'HEALTHCHECK') {
      const at = args.indexOf('CMD ');
      out.healthcheck = at < 0 ? undefined : execForm(op, args.slice(at + 4).trim());
    }
  }
  return out;
}
