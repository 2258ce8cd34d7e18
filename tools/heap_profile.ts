/**
 * What a running Deno process allocates that reaches its old generation, by where it was
 * allocated: V8's sampling heap profiler through the inspector (start the process with
 * `--inspect=127.0.0.1:PORT`), keeping the samples no scavenge collected. Those are the
 * objects a full collection has to find: the ones that lived long enough to be promoted,
 * and the young ones a full collection's marking found stored into old objects (it keeps
 * them to its end, and copies them in its pause). `deno task loadtest --heap-profile=DIR`
 * records one per window.
 *
 *   deno run -A tools/heap_profile.ts 127.0.0.1:9229 60 [out.txt]
 *
 * prints the allocation stacks that put the most bytes there over 60 s (the process's
 * long-lived state made in that time counts too: a window after the load has settled
 * makes little of it). With `--all` first, every sample is kept: all the process
 * allocated, by stack, what its scavenges' frequency follows (`deno task loadtest
 * --allocation-profile=DIR`).
 */
import { inspectorWindow } from "./cpu_profile.ts";

/** The Chrome DevTools protocol's sampling heap profile. */
export interface SamplingHeapProfile {
  head: ProfileNode;
  samples: { size: number; nodeId: number }[];
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: ProfileNode[];
}

/** Bytes sampled at one allocation stack. */
export interface AllocationSite {
  /** Innermost frame first: `name file:line < caller file:line < …`. */
  stack: string;
  bytes: number;
  share: number;
}

/**
 * Samples `seconds` of allocation at `hostPort`, keeping what no scavenge collected
 * (a sample every `intervalBytes` allocated, on average).
 */
export function recordOldGenerationProfile(
  hostPort: string,
  opts: { seconds: number; intervalBytes?: number },
): Promise<SamplingHeapProfile> {
  return recordSampling(hostPort, { ...opts, keepYoung: false });
}

/**
 * Samples `seconds` of allocation at `hostPort`, all of it: what the young generation's
 * collections take back too (how often they come follows it).
 */
export function recordAllocationProfile(
  hostPort: string,
  opts: { seconds: number; intervalBytes?: number },
): Promise<SamplingHeapProfile> {
  return recordSampling(hostPort, { ...opts, keepYoung: true });
}

async function recordSampling(
  hostPort: string,
  opts: { seconds: number; intervalBytes?: number; keepYoung: boolean },
): Promise<SamplingHeapProfile> {
  const result = await inspectorWindow<{ profile: SamplingHeapProfile }>(hostPort, {
    domain: "HeapProfiler",
    start: [["HeapProfiler.startSampling", {
      samplingInterval: opts.intervalBytes ?? 16_384,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: opts.keepYoung,
    }]],
    stop: "HeapProfiler.stopSampling",
    seconds: opts.seconds,
  });
  return result.profile;
}

/** The sampled bytes by allocation stack (its `depth` innermost frames), most first. */
export function allocationSites(profile: SamplingHeapProfile, depth = 5): AllocationSite[] {
  const nodes = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  const stack: ProfileNode[] = [profile.head];
  for (let node = stack.pop(); node; node = stack.pop()) {
    nodes.set(node.id, node);
    for (const child of node.children ?? []) {
      parent.set(child.id, node.id);
      stack.push(child);
    }
  }
  const frame = (node: ProfileNode) => {
    const f = node.callFrame;
    const file = f.url.replace(/^.*\/(?=[^/]+\/[^/]+$)/, "");
    return `${f.functionName || "(anonymous)"} ${file}:${f.lineNumber + 1}`;
  };
  const bytes = new Map<string, number>();
  let total = 0;
  for (const s of profile.samples) {
    const frames: string[] = [];
    for (let id: number | undefined = s.nodeId; id !== undefined && frames.length < depth;) {
      const node = nodes.get(id);
      if (!node || node === profile.head) break;
      frames.push(frame(node));
      id = parent.get(id);
    }
    const key = frames.join(" < ") || "(root)";
    bytes.set(key, (bytes.get(key) ?? 0) + s.size);
    total += s.size;
  }
  return [...bytes].sort((a, b) => b[1] - a[1]).map(([stack, b]) => ({
    stack,
    bytes: b,
    share: Math.round((b / Math.max(1, total)) * 1000) / 1000,
  }));
}

/** A report: the total, then the top `top` stacks, one a line. */
export function formatSites(
  sites: readonly AllocationSite[],
  opts: { seconds: number; top?: number; young?: "dropped" | "kept" },
): string {
  const total = sites.reduce((a, s) => a + s.bytes, 0);
  const mb = (b: number) => (b / 1e6).toFixed(2);
  const what = opts.young === "kept" ? "allocated" : "sampled that no scavenge collected";
  const lines = [
    `${mb(total)} MB ${what}, over ${opts.seconds} s (${mb(total / opts.seconds)} MB/s):`,
  ];
  for (const s of sites.slice(0, opts.top ?? 40)) {
    lines.push(`${(s.share * 100).toFixed(1).padStart(5)} %  ${mb(s.bytes)} MB  ${s.stack}`);
  }
  return lines.join("\n");
}

if (import.meta.main) {
  const all = Deno.args.includes("--all");
  const [hostPort, seconds = "60", out] = Deno.args.filter((a) => a !== "--all");
  if (!hostPort) {
    console.error("usage: heap_profile.ts [--all] HOST:PORT [SECONDS] [OUT.txt]");
    Deno.exit(2);
  }
  const record = all ? recordAllocationProfile : recordOldGenerationProfile;
  const profile = await record(hostPort, { seconds: Number(seconds) });
  const report = formatSites(allocationSites(profile), {
    seconds: Number(seconds),
    young: all ? "kept" : "dropped",
  });
  if (out) await Deno.writeTextFile(out, report + "\n");
  console.log(report);
}
