/**
 * Starts a local cluster: a registry (a throwaway redis-server, or a Deno KV file)
 * and N game processes (main.ts) on free 127.0.0.1 ports, each with its own
 * PROCESS_ID and PUBLIC_URL and one shared TOKEN_SECRET. Used by `deno task
 * cluster`, `deno task cluster-smoke` and the e2e cluster tests.
 */
import { freePort, type RedisServer, startRedis } from "./redis_server.ts";

/** One game process of a local cluster. */
export interface GameProcess {
  readonly id: string;
  readonly port: number;
  /** http://127.0.0.1:PORT */
  readonly url: string;
  /** ws://127.0.0.1:PORT/ws */
  readonly wsUrl: string;
  readonly child: Deno.ChildProcess;
  /** The last lines it wrote (stdout and stderr), for failure messages. */
  readonly output: string[];
}

/** A running local cluster. */
export interface LocalCluster {
  readonly registryUrl: string;
  readonly backend: "redis" | "kv";
  readonly procs: GameProcess[];
  /** Sends `signal` to one process and waits for it to exit. */
  kill(proc: GameProcess, signal: Deno.Signal): Promise<Deno.CommandStatus>;
  /** Stops every process (SIGTERM), then the registry. */
  stop(): Promise<void>;
}

/** Options of a local cluster. */
export interface ClusterOptions {
  readonly processes: number;
  readonly backend?: "redis" | "kv";
  /** First port (then consecutive); free ports when absent. */
  readonly basePort?: number;
  /** Extra environment for every process. */
  readonly env?: Record<string, string>;
  /** Print each process's log lines with its id. */
  readonly echo?: boolean;
}

const MAIN = new URL("../main.ts", import.meta.url).pathname;

/** Starts the registry and the processes; resolves once every process answers /healthz. */
export async function startCluster(opts: ClusterOptions): Promise<LocalCluster> {
  const backend = opts.backend ?? "redis";
  let redis: RedisServer | undefined;
  let kvDir: string | undefined;
  let registryUrl: string;
  if (backend === "redis") {
    redis = await startRedis();
    registryUrl = redis.url;
  } else {
    kvDir = await Deno.makeTempDir({ prefix: "bh_cluster_kv_" });
    registryUrl = `kv:${kvDir}/registry.db`;
  }
  const secret = Array.from(crypto.getRandomValues(new Uint8Array(32)))
    .map((b) => b.toString(16).padStart(2, "0")).join("");
  const ports = Array.from(
    { length: opts.processes },
    (_, i) => opts.basePort ? opts.basePort + i : freePort(),
  );
  const origins = ports.map((p) => `http://127.0.0.1:${p}`);
  const procs: GameProcess[] = ports.map((port, i) => {
    const id = `g${i + 1}`;
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", MAIN],
      env: {
        HOST: "127.0.0.1",
        PORT: String(port),
        PROCESS_ID: id,
        PUBLIC_URL: `http://127.0.0.1:${port}`,
        REGISTRY_URL: registryUrl,
        TOKEN_SECRET: secret,
        // A page served by one process opens the sockets of the others.
        ALLOWED_ORIGINS: origins.join(","),
        MAX_CONNECTIONS_PER_IP: "1000",
        // stop()'s SIGTERM (and Ctrl-C on `deno task cluster`) stops them at once.
        DRAIN_SECONDS: "0",
        ...opts.env,
      },
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const output: string[] = [];
    for (const stream of [child.stdout, child.stderr]) {
      keepLines(stream, (line) => {
        output.push(line);
        if (output.length > 200) output.shift();
        if (opts.echo) console.log(`[${id}] ${line}`);
      });
    }
    return {
      id,
      port,
      url: `http://127.0.0.1:${port}`,
      wsUrl: `ws://127.0.0.1:${port}/ws`,
      child,
      output,
    };
  });
  const exited = new Set<GameProcess>();
  const cluster: LocalCluster = {
    registryUrl,
    backend,
    procs,
    async kill(proc, signal) {
      try {
        proc.child.kill(signal);
      } catch {
        // already gone
      }
      const status = await proc.child.status;
      exited.add(proc);
      return status;
    },
    async stop() {
      await Promise.all(procs.filter((p) => !exited.has(p)).map((p) => cluster.kill(p, "SIGTERM")));
      await redis?.stop();
      if (kvDir) await Deno.remove(kvDir, { recursive: true }).catch(() => {});
    },
  };
  try {
    await Promise.all(procs.map((p) => waitHealthy(p, 60_000)));
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  return cluster;
}

async function waitHealthy(p: GameProcess, timeoutMs: number): Promise<void> {
  const start = performance.now();
  for (;;) {
    try {
      const res = await fetch(`${p.url}/healthz`);
      const body = await res.json();
      if (body.ok && body.registry === "up") return;
    } catch {
      // not listening yet
    }
    if (performance.now() - start > timeoutMs) {
      throw new Error(
        `${p.id} did not become healthy with its registry up: ${p.output.slice(-5).join(" | ")}`,
      );
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

function keepLines(stream: ReadableStream<Uint8Array>, onLine: (line: string) => void): void {
  (async () => {
    let rest = "";
    const decoder = new TextDecoder();
    for await (const bytes of stream) {
      const lines = (rest + decoder.decode(bytes, { stream: true })).split("\n");
      rest = lines.pop() ?? "";
      for (const l of lines) onLine(l);
    }
    if (rest) onLine(rest);
  })().catch(() => {});
}
