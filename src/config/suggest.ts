/**
 * "Did you mean …": the closest known word to a mistyped one (a command, an option), or null when nothing is
 * close. Close means an edit distance (insertions, deletions, substitutions, adjacent swaps) of at most a third
 * of the word's length, at least 1 and at most 2, so `statsu` finds `status` but `x` finds nothing.
 */
export function closest(word: string, candidates: readonly string[]): string | null {
  const limit = Math.min(2, Math.max(1, Math.floor(word.length / 3)));
  let best: string | null = null;
  let bestDistance = limit + 1;
  for (const c of candidates) {
    const d = distance(word.toLowerCase(), c.toLowerCase());
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  return best;
}

/** Optimal string alignment distance (Damerau-Levenshtein without repeated edits of one substring). */
function distance(a: string, b: string): number {
  const width = b.length + 1;
  const d = new Uint16Array((a.length + 1) * width);
  const at = (i: number, j: number) => d[i * width + j] ?? 0;
  for (let i = 0; i <= a.length; i++) d[i * width] = i;
  for (let j = 0; j <= b.length; j++) d[j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, at(i - 2, j - 2) + 1);
      d[i * width + j] = best;
    }
  }
  return at(a.length, b.length);
}

/** ` (did you mean "x"?)` or the empty string. */
export function didYouMean(word: string, candidates: readonly string[]): string {
  const match = closest(word, candidates);
  return match === null ? '' : ` (did you mean "${match}"?)`;
}
