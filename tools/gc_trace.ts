/**
 * Reads V8's `--trace-gc` lines (one per collection, on the traced process's stdout) as
 * they arrive, and counts the collections: scavenges, and full collections with their
 * pauses. `deno task loadtest` runs its server with `--trace-gc` and reports each
 * window's collections from this, so a full collection inside a window is named, not
 * guessed from a late tick.
 *
 *   [pid:0x…]  116783 ms: Incremental Mark-Compact 138.3 (147.1) -> 56.3 (93.1) MB, pooled: 54.0 MB, 66.38 / 0.00 ms (+ 83.1 ms in 892 steps …) …
 *   [pid:0x…]  278207 ms: Scavenge (during sweeping) 116.3 (128.3) -> 109.7 (128.3) MB, pooled: 0.0 MB, 3.03 / 0.00 ms …
 *
 * The pause is the first of the two times (the second is the embedder's part).
 *
 * V8 prints a trace line in several writes, and the server's own log lines (JSON, `{"t":"`
 * first, each one write) share the stream: one can land inside a trace line,
 *
 *   [pid:0x…]    24028 ms: Scaven{"t":"…","event":"slow_tick",…}
 *   ge (during sweeping) 60.9 (71.1) -> 54.2 (71.1) MB, …
 *
 * so the log line is taken out and the trace line joined again (35 of 4,166 trace lines
 * in a 300 s load test were cut so; a full collection's could be among them).
 */

/** One collection as its trace line names it. */
export interface GcEvent {
  readonly kind: "scavenge" | "full";
  /** The main thread's pause, ms. */
  readonly pauseMs: number;
  /** When it ran: ms since the traced process started. */
  readonly atMs: number;
  /** The heap (V8's objects, MB) before and after it. */
  readonly heapMb: readonly [before: number, after: number];
}

const LINE =
  /(\d+) ms: (Scavenge|Minor Mark-Sweep|(?:[A-Za-z]+ )?Mark-(?:Compact|Sweep))\b\D*([\d.]+) \([\d.]+\) -> ([\d.]+) \([\d.]+\) MB, (?:pooled: [\d.]+ MB, )?([\d.]+) \/ [\d.]+ ms/;

/** The collection a `--trace-gc` line reports, or undefined for any other line. */
export function parseGcTraceLine(line: string): GcEvent | undefined {
  const m = LINE.exec(line);
  if (!m) return undefined;
  const kind = m[2] === "Scavenge" || m[2] === "Minor Mark-Sweep" ? "scavenge" : "full";
  return {
    kind,
    pauseMs: Number(m[5]),
    atMs: Number(m[1]),
    heapMb: [Number(m[3]), Number(m[4])],
  };
}

/** A full collection as the load test's summary lists it. */
export interface FullCollection {
  /** Seconds since the server started. */
  readonly atS: number;
  /** The heap before and after, MB: what it grew to, and what was live. */
  readonly heapMb: readonly [number, number];
  /** The pause, ms (to a tenth). */
  readonly pauseMs: number;
}

/** What a stretch of the trace held. */
export interface GcCounts {
  scavenges: number;
  fullCollections: number;
  /** Each full collection's pause, ms, in order. */
  fullPausesMs: number[];
}

/** Where a server log line starts (main.ts writes JSON with its time first). */
const LOG_LINE = '{"t":"';

/** Collections counted so far, from text fed in whatever chunks it arrives in. */
export class GcTally {
  #partial = "";
  /** The head of a trace line that a log line cut: the rest is the next line. */
  #cut = "";
  #scavenges = 0;
  readonly #full: FullCollection[] = [];

  /** Feeds trace text; calls `other` with each complete line that is not a collection's. */
  feed(text: string, other?: (line: string) => void): void {
    const lines = (this.#partial + text).split("\n");
    this.#partial = lines.pop() ?? "";
    for (let line of lines) {
      line = this.#cut + line;
      this.#cut = "";
      const log = line.indexOf(LOG_LINE);
      if (log > 0) {
        other?.(line.slice(log));
        this.#cut = line.slice(0, log);
        continue;
      }
      const e = parseGcTraceLine(line);
      if (!e) other?.(line);
      else if (e.kind === "scavenge") this.#scavenges++;
      else {
        this.#full.push({
          atS: Math.round(e.atMs / 100) / 10,
          heapMb: e.heapMb,
          pauseMs: Math.round(e.pauseMs * 10) / 10,
        });
      }
    }
  }

  /** A mark to count from: `since(mark)` gives what came after it. */
  mark(): { scavenges: number; full: number } {
    return { scavenges: this.#scavenges, full: this.#full.length };
  }

  /** The collections since `mark`. */
  since(mark: { scavenges: number; full: number }): GcCounts {
    const fullPausesMs = this.#full.slice(mark.full).map((f) => f.pauseMs);
    return {
      scavenges: this.#scavenges - mark.scavenges,
      fullCollections: fullPausesMs.length,
      fullPausesMs,
    };
  }

  /**
   * Every full collection so far, in order: how far apart they come and how large the
   * heap grew before each (the old generation's limit) is what the V8 flags decide.
   */
  fullCollections(): FullCollection[] {
    return [...this.#full];
  }
}
