/**
 * Where a dungeon's step goes, part by part: the probe `deno task server-bench --parts`
 * gives every instance (net/server/instance.ts INSTANCE_STEP_PARTS around
 * sim/world.ts WORLD_STEP_PARTS). Each lap reads the clock and adds the time since the
 * last one to the part that just ended, so the parts of a tick add up to the time from
 * `start()` to the last instance's end. Only dungeons' parts are kept: the hub's laps
 * move the clock on, so the next dungeon's `between` is the server's loop, not the hub.
 *
 * A lap costs a clock read (~0.2–0.4 µs here, `lapUs` says how much on the run's own
 * machine), and each part carries about one: read the parts against each other and
 * against the same run's, not against a run without `--parts`. The host's speed moves
 * every part at once: a change to one part is read against a part it left alone.
 */
import type { StepProbe } from "../sim/mod.ts";

/** Sums each part of the dungeons' steps. */
export class StepParts {
  readonly #now: () => number;
  #last = 0;
  /** Total ms of each part, in the order the parts first ran. */
  readonly #totals = new Map<string, number>();
  /** Dungeon steps counted (one per `between`). */
  steps = 0;
  /** Counts (true) or only watches (false, a warm-up): the clock moves on either way. */
  counting = true;
  readonly #dungeon: StepProbe = { lap: (part) => this.#lap(part, true) };
  readonly #other: StepProbe = { lap: (part) => this.#lap(part, false) };

  constructor(now: () => number = () => performance.now()) {
    this.#now = now;
  }

  /** The probe for an instance of this kind (GameServer's `stepProbe`). */
  probeFor(kind: "hub" | "dungeon"): StepProbe {
    return kind === "dungeon" ? this.#dungeon : this.#other;
  }

  /** Called before each server tick: what runs before the first instance is no part's. */
  start(): void {
    this.#last = this.#now();
  }

  #lap(part: string, dungeon: boolean): void {
    const t = this.#now();
    if (dungeon && this.counting) {
      if (part === "between") this.steps++;
      this.#totals.set(part, (this.#totals.get(part) ?? 0) + t - this.#last);
    }
    this.#last = t;
  }

  /** µs per dungeon step of each part, to a tenth, in the order they run. */
  perStepUs(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [part, ms] of this.#totals) {
      out[part] = this.steps > 0 ? Math.round((ms / this.steps) * 1e4) / 10 : 0;
    }
    return out;
  }
}

/** What one lap costs on this machine now, µs: a probe's own share of each part. */
export function lapCostUs(now: () => number = () => performance.now(), laps = 200_000): number {
  const parts = new StepParts(now);
  const probe = parts.probeFor("dungeon");
  parts.start();
  const t0 = now();
  for (let i = 0; i < laps; i++) probe.lap("between");
  return Math.round(((now() - t0) / laps) * 1e4) / 10;
}
