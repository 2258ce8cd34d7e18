/**
 * Command-line flags for the project's tools: `--name=value` and `--name`. A flag a
 * tool does not know is a typo to report, not something to ignore: `--step=200` for
 * `--steps=200` would otherwise run the whole default ladder.
 */

/** What a tool takes: flags with a value, switches, and whether bare words are allowed. */
export interface FlagSpec {
  readonly values?: readonly string[];
  readonly switches?: readonly string[];
  /** A bare argument that matches (e.g. a count), if the tool takes one. */
  readonly positional?: RegExp;
}

/** Why each argument of `argv` is not one `spec` takes (empty when all are). */
export function unknownArgs(argv: readonly string[], spec: FlagSpec): string[] {
  const out: string[] = [];
  for (const a of argv) {
    if (a.startsWith("--")) {
      const eq = a.indexOf("=");
      const name = a.slice(2, eq < 0 ? undefined : eq);
      if (eq >= 0 && spec.values?.includes(name)) continue;
      if (eq < 0 && spec.switches?.includes(name)) continue;
      if (eq < 0 && spec.values?.includes(name)) out.push(`${a} needs a value (--${name}=…)`);
      else if (eq >= 0 && spec.switches?.includes(name)) out.push(`${a} takes no value`);
      else out.push(`unknown flag ${a}`);
    } else if (!spec.positional?.test(a)) {
      out.push(`unexpected argument ${a}`);
    }
  }
  return out;
}

/** The usage line of a tool taking `spec`. */
export function usage(tool: string, spec: FlagSpec, positional = ""): string {
  const flags = [
    ...(positional ? [positional] : []),
    ...(spec.values ?? []).map((v) => `[--${v}=…]`),
    ...(spec.switches ?? []).map((s) => `[--${s}]`),
  ];
  return `usage: deno task ${tool} ${flags.join(" ")}`;
}

/** Exits with the problems and the usage line when `argv` holds anything `spec` does not take. */
export function checkArgs(
  tool: string,
  argv: readonly string[],
  spec: FlagSpec,
  positional = "",
): void {
  const problems = unknownArgs(argv, spec);
  if (problems.length === 0) return;
  for (const p of problems) console.error(`${tool}: ${p}`);
  console.error(usage(tool, spec, positional));
  Deno.exit(2);
}

/**
 * The value of `--name=value` in `argv`, if given: everything after the first "=", so a
 * value may hold more (`--server-v8=--flag=1`).
 */
export function flagValue(argv: readonly string[], name: string): string | undefined {
  return argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
}

/** A list of positive integers (`--steps=150,175,200`), or a clear error. */
export function positiveInts(flag: string, value: string): number[] {
  const out = value.split(",").map((v) => Number(v));
  if (out.length === 0 || out.some((n) => !Number.isInteger(n) || n < 1)) {
    throw new Error(`--${flag}=${value}: expected positive whole numbers, comma-separated`);
  }
  return out;
}

/** A whole number within [min, max] (`--crowd=200`), or a clear error. */
export function intIn(flag: string, value: string, min: number, max: number): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new Error(`--${flag}=${value}: expected a whole number from ${min} to ${max}`);
  }
  return n;
}
