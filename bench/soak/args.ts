/**
 * The soak's command line: `--minutes N` (default 10), `--seconds N`, `--seed S`, `--out FILE`, `--smoke`. With
 * `--smoke` the run is the short scripted one `npm test` runs (bench/soak/smoke.ts): it ends when its script does,
 * and the duration is only its deadline (default 40 s).
 */
export interface SoakArgs {
  durationMs: number;
  smoke: boolean;
  seed: number;
  /** Where to write the report; null: bench/SOAK.md for runs of 2 minutes or more, else nowhere. */
  out: string | null;
}

export function parseSoakArgs(argv: readonly string[], randomSeed: () => number): SoakArgs {
  let durationMs: number | null = null;
  let smoke = false;
  let seed: number | null = null;
  let out: string | null = null;
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[i + 1];
    const number = () => {
      const n = Number(value);
      if (value === undefined || !Number.isFinite(n) || n <= 0) throw new Error(`${flag} needs a positive number`);
      i++;
      return n;
    };
    if (flag === '--minutes') durationMs = number() * 60_000;
    else if (flag === '--seconds') durationMs = number() * 1000;
    else if (flag === '--seed') seed = Math.floor(number());
    else if (flag === '--smoke') smoke = true;
    else if (flag === '--out') {
      if (value === undefined) throw new Error('--out needs a file');
      out = value;
      i++;
    } else if (flag === '--') continue;
    else throw new Error(`unknown option ${flag} (expected --minutes N, --seconds N, --seed S, --out FILE, --smoke)`);
  }
  return { durationMs: durationMs ?? (smoke ? 40_000 : 10 * 60_000), smoke, seed: seed ?? randomSeed(), out };
}
