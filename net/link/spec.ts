/**
 * How a simulated link behaves, and the one-string form it is configured with
 * (`LINK_SIM=150±50,stall=250/4000`). Data and parsing only: no clock, no I/O.
 *
 * Grammar (items separated by commas, spaces ignored):
 *
 *   D[±J]            one-way delay D ms with uniform jitter ±J ms, both directions
 *   up=D[±J]         client → server only       down=D[±J]   server → client only
 *   stall=L/E        in each direction, a stall of L ms about every E ms (each gap
 *                    uniform in [E/2, 3E/2]): nothing arrives during it, then all at once
 *   seed=N           the seed of jitter and stalls (default 1)
 *   off | 0 | ""     no simulated link
 *
 * `+-` may stand for `±`. Example: `75±25,stall=250/4000`, `down=150±50,up=20,seed=7`.
 */

/** One direction of a link, all in ms. */
export interface LinkDirectionSpec {
  /** Mean one-way delay. */
  readonly delayMs: number;
  /** Uniform spread around the delay, ±. Order is kept whatever the jitter (as TCP does). */
  readonly jitterMs: number;
  /** Length of one stall (0 = no stalls). */
  readonly stallMs: number;
  /** Mean gap between the end of a stall and the start of the next. */
  readonly stallEveryMs: number;
}

/** Both directions of a link and the seed of its randomness. */
export interface LinkSpec {
  /** Client → server. */
  readonly up: LinkDirectionSpec;
  /** Server → client. */
  readonly down: LinkDirectionSpec;
  readonly seed: number;
}

/** A direction that adds nothing. */
export const DIRECT: LinkDirectionSpec = { delayMs: 0, jitterMs: 0, stallMs: 0, stallEveryMs: 0 };

/** Most ms any single figure may take (a minute: more is a typo, not a link). */
const MAX_MS = 60_000;
/** Most ms between stalls (ten minutes: a link that stalls once in a long while). */
const MAX_STALL_EVERY_MS = 600_000;

/** Thrown for a spec that cannot be read; the message says what was wrong. */
export class LinkSpecError extends Error {
  override name = "LinkSpecError";
}

/** Reads a link spec; undefined for `off`, `0` or an empty string. Throws LinkSpecError. */
export function parseLinkSpec(text: string): LinkSpec | undefined {
  const clean = text.replace(/\s+/g, "").replaceAll("+-", "±");
  if (clean === "" || clean === "off" || clean === "0") return undefined;
  let both: Pick<LinkDirectionSpec, "delayMs" | "jitterMs"> | undefined;
  let up: typeof both;
  let down: typeof both;
  let stall = { stallMs: 0, stallEveryMs: 0 };
  let seed = 1;
  for (const item of clean.split(",")) {
    const eq = item.indexOf("=");
    const key = eq < 0 ? "" : item.slice(0, eq);
    const value = eq < 0 ? item : item.slice(eq + 1);
    switch (key) {
      case "":
        both = delay(value, item);
        break;
      case "up":
        up = delay(value, item);
        break;
      case "down":
        down = delay(value, item);
        break;
      case "stall": {
        const m = /^(\d+(?:\.\d+)?)\/(\d+(?:\.\d+)?)$/.exec(value);
        if (!m) throw bad(item, "a stall is LENGTH/EVERY in ms, e.g. stall=250/4000");
        stall = { stallMs: ms(m[1], item), stallEveryMs: ms(m[2], item, MAX_STALL_EVERY_MS) };
        if (stall.stallMs > 0 && stall.stallEveryMs < 1) {
          throw bad(item, "stalls need a gap of at least 1 ms");
        }
        break;
      }
      case "seed": {
        if (!/^\d+$/.test(value)) throw bad(item, "the seed is a whole number");
        seed = Number(value) >>> 0;
        break;
      }
      default:
        throw bad(item, `unknown setting "${key}" (known: up, down, stall, seed)`);
    }
  }
  const base = both ?? { delayMs: 0, jitterMs: 0 };
  return {
    up: { ...(up ?? base), ...stall },
    down: { ...(down ?? base), ...stall },
    seed,
  };
}

/** The spec back as text, in the form `parseLinkSpec` reads (for logs and reports). */
export function formatLinkSpec(spec: LinkSpec | undefined): string {
  if (!spec) return "off";
  const d = (s: LinkDirectionSpec) =>
    s.jitterMs > 0 ? `${s.delayMs}±${s.jitterMs}` : `${s.delayMs}`;
  const same = d(spec.up) === d(spec.down);
  const parts = same ? [d(spec.up)] : [`up=${d(spec.up)}`, `down=${d(spec.down)}`];
  const stalls = spec.up.stallMs > 0 ? spec.up : spec.down;
  if (stalls.stallMs > 0) parts.push(`stall=${stalls.stallMs}/${stalls.stallEveryMs}`);
  if (spec.seed !== 1) parts.push(`seed=${spec.seed}`);
  return parts.join(",");
}

/** Builds a spec in code (tests, tools): the same delay and stalls both ways. */
export function linkSpec(
  opts: Partial<LinkDirectionSpec> & { seed?: number },
): LinkSpec {
  const dir: LinkDirectionSpec = {
    delayMs: opts.delayMs ?? 0,
    jitterMs: opts.jitterMs ?? 0,
    stallMs: opts.stallMs ?? 0,
    stallEveryMs: opts.stallEveryMs ?? 0,
  };
  return { up: dir, down: dir, seed: opts.seed ?? 1 };
}

function delay(value: string, item: string): { delayMs: number; jitterMs: number } {
  const m = /^(\d+(?:\.\d+)?)(?:±(\d+(?:\.\d+)?))?$/.exec(value);
  if (!m) throw bad(item, "a delay is MS or MS±JITTER, e.g. 150±50");
  const delayMs = ms(m[1], item);
  const jitterMs = m[2] === undefined ? 0 : ms(m[2], item);
  if (jitterMs > delayMs) throw bad(item, "the jitter cannot exceed the delay");
  return { delayMs, jitterMs };
}

function ms(raw: string, item: string, max = MAX_MS): number {
  const v = Number(raw);
  if (!Number.isFinite(v) || v < 0 || v > max) {
    throw bad(item, `${raw} ms is outside [0, ${max}]`);
  }
  return v;
}

function bad(item: string, why: string): LinkSpecError {
  return new LinkSpecError(`Cannot read link setting "${item}": ${why}`);
}
