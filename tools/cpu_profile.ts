/**
 * Samples a running Deno process's CPU through its inspector (start it with
 * `--inspect=127.0.0.1:PORT`; Deno has no `--cpu-prof`), and sums the samples by
 * function. `deno task loadtest --profile=DIR` uses it on every measured window.
 *
 *   deno run -A tools/cpu_profile.ts 127.0.0.1:9229 10 [out.cpuprofile]
 *
 * prints the functions with the most self time over 10 s, and writes the whole
 * profile (open it in Chromium's DevTools, Performance panel) when given a path.
 */

/** The Chrome DevTools protocol's CPU profile. */
export interface CpuProfile {
  nodes: {
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number };
    children?: number[];
  }[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** One function's share of a profile. */
export interface FunctionCost {
  /** `name file:line`. */
  where: string;
  selfMs: number;
  selfShare: number;
}

/** A DevTools protocol session with the inspector at `hostPort` (e.g. "127.0.0.1:9229"). */
async function inspectorSession(hostPort: string): Promise<{
  call(method: string, params?: Record<string, unknown>): Promise<unknown>;
  close(): void;
}> {
  const targets = await (await fetch(`http://${hostPort}/json/list`)).json();
  const url = targets[0]?.webSocketDebuggerUrl as string | undefined;
  if (!url) throw new Error(`no inspector target at ${hostPort}`);
  const ws = new WebSocket(url);
  const pending = new Map<number, (result: unknown) => void>();
  let nextId = 1;
  ws.onmessage = (e) => {
    const msg = JSON.parse(e.data as string);
    if (msg.id !== undefined) pending.get(msg.id)?.(msg.result ?? msg.error);
    pending.delete(msg.id);
  };
  await new Promise<void>((resolve, reject) => {
    ws.onopen = () => resolve();
    ws.onerror = () => reject(new Error(`cannot open ${url}`));
  });
  return {
    call: (method, params = {}) =>
      new Promise<unknown>((resolve) => {
        const id = nextId++;
        pending.set(id, resolve);
        ws.send(JSON.stringify({ id, method, params }));
      }),
    close: () => ws.close(),
  };
}

/**
 * One sampling window through the inspector at `hostPort`: enables `domain`, makes the
 * `start` calls in order, waits `seconds`, and returns what the `stop` call answers.
 */
export async function inspectorWindow<T>(
  hostPort: string,
  opts: {
    domain: string;
    start: readonly [method: string, params?: Record<string, unknown>][];
    stop: string;
    seconds: number;
  },
): Promise<T> {
  const { call, close } = await inspectorSession(hostPort);
  try {
    await call(`${opts.domain}.enable`);
    for (const [method, params] of opts.start) await call(method, params);
    await new Promise((r) => setTimeout(r, opts.seconds * 1000));
    const result = await call(opts.stop) as T;
    await call(`${opts.domain}.disable`);
    return result;
  } finally {
    close();
  }
}

/** Records `seconds` of CPU samples from the inspector at `hostPort` (e.g. "127.0.0.1:9229"). */
export async function recordProfile(
  hostPort: string,
  opts: { seconds: number; samplingIntervalUs?: number },
): Promise<CpuProfile> {
  const result = await inspectorWindow<{ profile: CpuProfile }>(hostPort, {
    domain: "Profiler",
    start: [
      ["Profiler.setSamplingInterval", { interval: opts.samplingIntervalUs ?? 200 }],
      ["Profiler.start"],
    ],
    stop: "Profiler.stop",
    seconds: opts.seconds,
  });
  return result.profile;
}

/** Self time by function, most first (idle and GC stay in, under their own names). */
export function selfTimes(profile: CpuProfile): FunctionCost[] {
  const byNode = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<string, number>();
  let totalUs = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const node = byNode.get(profile.samples[i]);
    const dt = profile.timeDeltas[i + 1] ?? 0;
    if (!node) continue;
    const f = node.callFrame;
    const file = f.url.replace(/^.*\/(?=[^/]+\/[^/]+$)/, "");
    const where = `${f.functionName || "(anonymous)"} ${file}:${f.lineNumber + 1}`;
    selfUs.set(where, (selfUs.get(where) ?? 0) + dt);
    totalUs += dt;
  }
  return [...selfUs].sort((a, b) => b[1] - a[1]).map(([where, us]) => ({
    where,
    selfMs: Math.round(us / 100) / 10,
    selfShare: Math.round((us / Math.max(1, totalUs)) * 1000) / 1000,
  }));
}

if (import.meta.main) {
  const [hostPort, seconds = "10", out] = Deno.args;
  if (!hostPort) {
    console.error("usage: cpu_profile.ts HOST:PORT [SECONDS] [OUT.cpuprofile]");
    Deno.exit(2);
  }
  const profile = await recordProfile(hostPort, { seconds: Number(seconds) });
  if (out) await Deno.writeTextFile(out, JSON.stringify(profile));
  for (const f of selfTimes(profile).slice(0, 40)) {
    console.log(`${(f.selfShare * 100).toFixed(1).padStart(5)} %  ${f.selfMs} ms  ${f.where}`);
  }
}
