/**
 * Reading `/metrics` back in tests: an independent parser (parse-prometheus-text-format) plus the checks it is
 * lenient about (it reads a garbage line as an untyped sample).
 */
import { createRequire } from 'node:module';

export interface Family {
  name: string;
  help: string;
  type: string;
  metrics: { value: string; labels?: Record<string, string> }[];
}

// The package ships CommonJS without types; this is its documented signature.
const parsePrometheus = createRequire(import.meta.url)('parse-prometheus-text-format') as (text: string) => Family[];

/** Parses and checks what the parser is lenient about; throws naming the offending line or family. */
export function parseExposition(text: string): Family[] {
  const families = parsePrometheus(text);
  const samples = text.split('\n').filter((l) => l !== '' && !l.startsWith('#'));
  const parsed = families.reduce((n, f) => n + f.metrics.length, 0);
  if (parsed !== samples.length) throw new Error(`${samples.length} sample lines but ${parsed} parsed samples`);
  for (const f of families) {
    if (!/^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(f.name)) throw new Error(`bad metric name ${f.name}`);
    if (f.type === 'UNTYPED' || !f.help) throw new Error(`${f.name} lacks # TYPE or # HELP`);
    for (const m of f.metrics)
      if (!/^[-+]?(?:\d+(?:\.\d*)?(?:e[-+]?\d+)?|Inf|NaN)$/i.test(m.value))
        throw new Error(`${f.name} has value ${JSON.stringify(m.value)}`);
  }
  return families;
}

export function sample(families: Family[], name: string, labels: Record<string, string> = {}): number | undefined {
  const f = families.find((x) => x.name === name);
  const m = f?.metrics.find((x) => Object.entries(labels).every(([k, v]) => x.labels?.[k] === v));
  return m === undefined ? undefined : Number(m.value);
}
