import { basename, dirname, extname, isAbsolute, join, relative } from 'node:path';
import { parseDocument, visit, type YAMLError } from 'yaml';
import { readRegularFile } from '../regular-file.ts';

/** One parsed YAML file (or variable) of the layered configuration; `name` is how problems name it. */
export interface Layer {
  file: string;
  name: string;
  data: Record<string, unknown>;
}

type LayerResult = { ok: true; layers: Layer[]; warnings: string[] } | { ok: false; problems: string[] };

/** Relative to the working directory when inside it, else absolute. */
export function displayName(file: string, cwd: string): string {
  const rel = relative(cwd, file);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : file;
}

type Parsed = { ok: true; data: Record<string, unknown>; warnings: string[] } | { ok: false; problems: string[] };

/** `file:line:col: message` for each YAML error; never throws. */
export function parseYaml(text: string, name: string): Parsed {
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  const where = (e: YAMLError) => {
    const pos = e.linePos?.[0];
    // yaml appends " at line L, column C:" and a code frame; the position goes in front instead.
    const msg = e.message.split('\n')[0]?.replace(/ at line \d+, column \d+:?$/, '') ?? e.message;
    return pos ? `${name}:${pos.line}:${pos.col}: ${msg}` : `${name}: ${msg}`;
  };
  if (doc.errors.length > 0) {
    // After the first syntax error the parser's further messages describe its own confusion ("Implicit keys need
    // to be on a single line" under a misindented key), so only that one is shown; duplicate keys each stand alone.
    const firstSyntax = doc.errors.find((e) => e.code !== 'DUPLICATE_KEY');
    const shown = doc.errors.filter((e) => e === firstSyntax || e.code === 'DUPLICATE_KEY');
    return { ok: false, problems: shown.map(where) };
  }
  const warnings = doc.warnings.map(where);
  // .NET reads every YAML scalar as the text written (`ApiToken: 0123` is "0123", not 123); numbers and booleans
  // are bound from that text later, where the schema expects one (binding.ts).
  visit(doc, {
    Scalar(_, node) {
      if ((typeof node.value === 'number' || typeof node.value === 'boolean') && node.source !== undefined)
        node.value = node.source;
    },
  });
  let data: unknown;
  try {
    data = doc.toJS();
  } catch (err) {
    // yaml refuses alias bombs (and similar) here rather than while parsing.
    return { ok: false, problems: [`${name}: ${err instanceof Error ? err.message : String(err)}`] };
  }
  if (data === null || data === undefined) return { ok: true, data: {}, warnings };
  if (typeof data !== 'object' || Array.isArray(data)) {
    const got = Array.isArray(data) ? 'a list' : JSON.stringify(data);
    return { ok: false, problems: [`${name}: (root): expected a map of settings, got ${got}`] };
  }
  return { ok: true, data: data as Record<string, unknown>, warnings };
}

/**
 * Reads and parses the main file (required), then `<stem>.<env><ext>` and `<stem>.Secret<ext>` beside it if there
 * (`appsettings.<env>.yml` and `appsettings.Secret.yml` for the default name, as the real watchdog reads).
 */
export async function readLayers(main: string, env: string, cwd: string): Promise<LayerResult> {
  const layers: Layer[] = [];
  const problems: string[] = [];
  const warnings: string[] = [];
  const [ext, dir] = [extname(main), dirname(main)];
  const stem = basename(main, ext);
  const files = [main, join(dir, `${stem}.${env}${ext}`), join(dir, `${stem}.Secret${ext}`)];
  for (const [index, file] of files.entries()) {
    const name = displayName(file, cwd);
    let text: string;
    try {
      // Never waits on a named pipe: a reload stuck there would hold every later one (SIGHUP too) behind it.
      text = await readRegularFile(file, 'utf8');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (index > 0 && code === 'ENOENT') continue;
      if (code === 'ENOENT') {
        // Only the default name can have been picked without --config; any other name came from --config.
        const advice =
          basename(file) === 'appsettings.yml'
            ? 'run the watchdog from the folder that holds it, or pass --config FILE'
            : 'check the path given to --config';
        problems.push(`${basename(file)} not found in ${dirname(file)} (${advice})`);
      } else {
        const why = code === 'ENOTREG' ? 'it is not a regular file' : (code ?? String(err));
        problems.push(`${name}: cannot read the file (${why}); check that it is a readable file`);
      }
      continue;
    }
    const parsed = parseYaml(text, name);
    if (!parsed.ok) problems.push(...parsed.problems);
    else {
      warnings.push(...parsed.warnings);
      layers.push({ file, name, data: parsed.data });
    }
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, layers, warnings };
}

/** The environment name that picks `appsettings.<env>.yml`, first set of these variables, else `Production`. */
export function environmentName(env: Record<string, string | undefined>): { variable: string; name: string } {
  for (const variable of ['WATCHDOG_ENV', 'DOTNET_ENVIRONMENT', 'ASPNETCORE_ENVIRONMENT']) {
    const name = env[variable]?.trim();
    if (name) return { variable, name };
  }
  return { variable: 'WATCHDOG_ENV', name: 'Production' };
}

/** Variables that set `Urls`, as the ASP.NET host reads them; the later one wins. */
const URL_VARIABLES = ['DOTNET_URLS', 'ASPNETCORE_URLS'];

/**
 * Settings from .NET-style variables (`Servers__Instances__main__ApiToken`, `ASPNETCORE_URLS`), one layer each so
 * a problem names its variable. Only those under a top-level setting count (never `PATH`); sorted by name, so the
 * environment's order does not matter.
 */
export function environmentLayers(env: Record<string, string | undefined>, topKeys: readonly string[]): Layer[] {
  const top = new Set(topKeys.map((k) => k.toLowerCase()));
  const layers: Layer[] = [];
  for (const variable of URL_VARIABLES) {
    const value = env[variable];
    if (value !== undefined && value.trim() !== '')
      layers.push({ file: variable, name: `environment variable ${variable}`, data: { Urls: value } });
  }
  for (const variable of Object.keys(env).sort()) {
    const value = env[variable];
    const parts = variable.split('__');
    const [head = '', last = ''] = [parts[0], parts.at(-1)];
    if (value === undefined || parts.length < 2 || parts.some((p) => p === '')) continue;
    if (!top.has(head.toLowerCase())) continue;
    let data: Record<string, unknown> = { [last]: value };
    for (const part of parts.slice(0, -1).reverse()) data = { [part]: data };
    layers.push({ file: variable, name: `environment variable ${variable}`, data });
  }
  return layers;
}
