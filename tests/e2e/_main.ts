/**
 * The real process for e2e tests: `deno run -A main.ts` on a free loopback port (or a
 * given one, to restart it where its players were), and polling helpers. Real time.
 */

export const MAIN = new URL("../../main.ts", import.meta.url).pathname;

/** A free loopback port (free when asked: bind it soon). */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

/** Polls `probe` until it resolves true; throws after `timeoutMs`. Real time: e2e only. */
export async function waitFor(what: string, probe: () => Promise<boolean>, timeoutMs: number) {
  const start = performance.now();
  while (!(await probe())) {
    if (performance.now() - start > timeoutMs) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** main.ts on `port` (a free one by default) with `env`, once /healthz says it is up. */
export async function startMain(env: Record<string, string>, port = freePort()) {
  const base = `http://127.0.0.1:${port}`;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN],
    env: { PORT: String(port), HOST: "127.0.0.1", LOG_LEVEL: "warn", WEBTRANSPORT: "0", ...env },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stdout = child.stdout.text();
  const stderr = child.stderr.text();
  const healthz = async () => {
    const res = await fetch(`${base}/healthz`);
    return { status: res.status, body: await res.json() };
  };
  await waitFor("/healthz", async () => {
    try {
      return (await healthz()).status === 200;
    } catch {
      return false;
    }
  }, 30_000);
  return {
    ws: `ws://127.0.0.1:${port}/ws`,
    port,
    child,
    healthz,
    stdout,
    stderr,
    async [Symbol.asyncDispose]() {
      try {
        child.kill("SIGKILL");
      } catch {
        // Already gone: the normal case.
      }
      await child.status;
      await stdout;
      await stderr;
    },
  };
}
