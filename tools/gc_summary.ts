/**
 * Sums V8's `--trace-gc-nvp` lines (one JSON object per collection) read on stdin:
 * how many scavenges, their pauses, what they promoted, and the full collections.
 * The bench's own report line passes through.
 *
 *   deno run -A --v8-flags=--max-semi-space-size=8,--trace-gc-nvp tools/server_bench.ts \
 *     --crowd=0 --dungeons=200 --ticks=1800 | deno run tools/gc_summary.ts
 */
interface GcRecord {
  gc: string;
  pause: number;
  promoted?: number;
}

/** The collections of a trace, summed. */
export function summarize(records: readonly GcRecord[]) {
  const scavenges = records.filter((r) => r.gc === "s");
  const pauses = scavenges.map((r) => r.pause).sort((a, b) => a - b);
  const at = (q: number) => pauses.length ? pauses[Math.floor(q * (pauses.length - 1))] : 0;
  const round = (v: number) => Math.round(v * 100) / 100;
  const full = records.filter((r) => r.gc !== "s");
  return {
    scavenges: scavenges.length,
    scavengeMs: round(pauses.reduce((a, b) => a + b, 0)),
    scavengeMedianMs: round(at(0.5)),
    scavengeP90Ms: round(at(0.9)),
    promotedMb: round(scavenges.reduce((a, r) => a + (r.promoted ?? 0), 0) / 1e6),
    fullCollections: full.length,
    fullPausesMs: full.map((r) => round(r.pause)),
  };
}

if (import.meta.main) {
  const records: GcRecord[] = [];
  const text = await new Response(Deno.stdin.readable).text();
  for (const line of text.split("\n")) {
    const at = line.indexOf("GC: {");
    if (at < 0) {
      if (line.startsWith("crowd ")) console.log(line);
      continue;
    }
    try {
      const r = JSON.parse(line.slice(at + 4));
      if (typeof r.gc === "string" && typeof r.pause === "number") records.push(r);
    } catch {
      // a line V8 split: skip it
    }
  }
  console.log(JSON.stringify(summarize(records)));
}
