/** tools/gc_trace.ts: V8's --trace-gc lines (as this Deno prints them) counted by kind. */
import assert from "node:assert/strict";
import { type GcEvent, GcTally, parseGcTraceLine } from "../../tools/gc_trace.ts";

const FULL =
  "[29779:0x7fc4bbc7d000]   116783 ms: Incremental Mark-Compact 138.3 (147.1) -> 56.3 (93.1) MB, pooled: 54.0 MB, 66.38 / 0.00 ms (+ 83.1 ms in 892 steps since start of marking, biggest step 0.9 ms, walltime since start of marking 790 ms) (average mu = 0.998, current mu = 0.998) finalize incremental marking via task; GC in old space requested";
const REDUCE =
  "[29716:0x7fb102e7b000]   103754 ms: Incremental Mark-Compact (reduce) 114.3 (123.1) -> 38.4 (84.3) MB, pooled: 0.0 MB, 107.00 / 0.00 ms (+ 59.8 ms in 601 steps since start of marking, biggest step 0.8 ms, walltime since start of marking 412 ms) (average mu = 0.998, current mu = 0.998) finalize incremental marking via task; GC in old space requested";
const SCAVENGE =
  "[29779:0x7fc4bbc7d000]   278207 ms: Scavenge (during sweeping) 116.3 (128.3) -> 109.7 (128.3) MB, pooled: 0.0 MB, 3.03 / 0.00 ms (average mu = 0.998, current mu = 0.998) allocation failure; ";
const MINOR_MS =
  "[16856:0x7f4201680000]      110 ms: Minor Mark-Sweep 3.8 (4.0) -> 3.7 (4.0) MB, pooled: 0.0 MB, 1.05 / 0.00 ms (average mu = 1.000, current mu = 1.000) allocation failure; ";

Deno.test("a trace line names its collection and its pause; other lines are none", () => {
  const named: [string, GcEvent][] = [
    [FULL, { kind: "full", pauseMs: 66.38, atMs: 116783, heapMb: [138.3, 56.3] }],
    [REDUCE, { kind: "full", pauseMs: 107, atMs: 103754, heapMb: [114.3, 38.4] }],
    [SCAVENGE, { kind: "scavenge", pauseMs: 3.03, atMs: 278207, heapMb: [116.3, 109.7] }],
    [MINOR_MS, { kind: "scavenge", pauseMs: 1.05, atMs: 110, heapMb: [3.8, 3.7] }],
  ];
  for (const [line, event] of named) assert.deepEqual(parseGcTraceLine(line), event);
  assert.equal(parseGcTraceLine('{"event":"slow_tick","ms":9.5}'), undefined);
  assert.equal(parseGcTraceLine("Warden of the Fold: play at http://127.0.0.1:8000/"), undefined);
});

Deno.test("a tally counts from a mark, whatever chunks the trace arrives in", () => {
  const text = [SCAVENGE, "a log line", SCAVENGE, FULL, SCAVENGE, REDUCE, ""].join("\n");
  for (const size of [text.length, 1, 7, 100]) {
    const tally = new GcTally();
    const others: string[] = [];
    const start = tally.mark();
    for (let at = 0; at < text.length; at += size) {
      tally.feed(text.slice(at, at + size), (line) => others.push(line));
    }
    assert.deepEqual(tally.since(start), {
      scavenges: 3,
      fullCollections: 2,
      fullPausesMs: [66.4, 107],
    }, `chunks of ${size}`);
    assert.deepEqual(others, ["a log line"]);
    // The whole run's, as the summary lists them: when, how large the heap grew, the pause.
    assert.deepEqual(tally.fullCollections(), [
      { atS: 116.8, heapMb: [138.3, 56.3], pauseMs: 66.4 },
      { atS: 103.8, heapMb: [114.3, 38.4], pauseMs: 107 },
    ]);
  }
  // A line counts once it is whole.
  const tally = new GcTally();
  tally.feed(`${SCAVENGE}\n${FULL}`);
  assert.equal(tally.since({ scavenges: 0, full: 0 }).fullCollections, 0);
  tally.feed("\n");
  assert.equal(tally.since({ scavenges: 0, full: 0 }).fullCollections, 1);
  const mark = tally.mark();
  tally.feed(`${SCAVENGE}\n`);
  assert.deepEqual(tally.since(mark), { scavenges: 1, fullCollections: 0, fullPausesMs: [] });
});

Deno.test("a log line written inside a trace line is passed on, and the trace line still counts", () => {
  const log = '{"t":"2026-12-03T12:00:10.135Z","event":"slow_tick","ms":9.79}';
  // As seen: the log line after the trace line's prefix, or in the middle of its text.
  const text = [
    `${FULL.slice(0, 22)}${log}`,
    `${FULL.slice(22)}`,
    `${SCAVENGE.slice(0, 50)}${log}`,
    `${SCAVENGE.slice(50)}`,
    log,
    SCAVENGE,
    "",
  ].join("\n");
  for (const size of [text.length, 1, 13]) {
    const tally = new GcTally();
    const others: string[] = [];
    for (let at = 0; at < text.length; at += size) {
      tally.feed(text.slice(at, at + size), (line) => others.push(line));
    }
    assert.deepEqual(tally.since({ scavenges: 0, full: 0 }), {
      scavenges: 2,
      fullCollections: 1,
      fullPausesMs: [66.4],
    }, `chunks of ${size}`);
    assert.deepEqual(others, [log, log, log]);
  }
});
