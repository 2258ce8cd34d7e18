/**
 * Starts a throwaway redis-server (Debian's) on a free 127.0.0.1 port, with no
 * persistence, for tests, the cluster tasks and the load test; `stop()` ends it.
 */

/** A running redis-server. */
export interface RedisServer {
  readonly url: string;
  readonly port: number;
  /** Stops it (SIGKILL when `hard`, to act like a crashed Redis) and waits for it. */
  stop(opts?: { hard?: boolean }): Promise<void>;
}

/** A free TCP port on 127.0.0.1 (free when asked; the caller binds it soon after). */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

/** Starts redis-server and resolves once it answers PING. */
export async function startRedis(opts: { port?: number } = {}): Promise<RedisServer> {
  const port = opts.port ?? freePort();
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command("redis-server", {
      args: ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
      stdout: "null",
      stderr: "null",
    }).spawn();
  } catch (err) {
    throw new Error(
      `Cannot start redis-server (apt-get install redis-server): ${(err as Error).message}`,
    );
  }
  const deadline = performance.now() + 5000;
  for (;;) {
    if (await ping(port)) break;
    if (performance.now() > deadline) {
      child.kill("SIGKILL");
      await child.status;
      throw new Error(`redis-server did not answer on port ${port} within 5 s`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  let stopped = false;
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    async stop({ hard = false } = {}) {
      if (stopped) return;
      stopped = true;
      child.kill(hard ? "SIGKILL" : "SIGTERM");
      await child.status;
    },
  };
}

async function ping(port: number): Promise<boolean> {
  try {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    try {
      await conn.write(new TextEncoder().encode("PING\r\n"));
      const buf = new Uint8Array(16);
      const n = await conn.read(buf);
      return n !== null && new TextDecoder().decode(buf.subarray(0, n)).startsWith("+PONG");
    } finally {
      conn.close();
    }
  } catch {
    return false;
  }
}
