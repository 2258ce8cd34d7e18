/**
 * The real process, as systemd and Docker run it: `deno run -A main.ts` on a free
 * port. SIGTERM closes a connected player with 4009 "server restarting" and the
 * process exits 0 within 5 s; an invalid PORT stops start-up with status 2 and a
 * message naming the variable.
 */
import assert from "node:assert/strict";
import type { InputSample } from "../../net/client/runtime.ts";
import { connectClient } from "../../net/client/connect.ts";
import { CloseCode } from "../../net/wire/protocol.ts";

const IDLE: InputSample = { moveX: 0, moveY: 0, aim: 0, buttons: 0 };

const MAIN = new URL("../../main.ts", import.meta.url).pathname;

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

/** Polls `probe` until it resolves true; throws after `timeoutMs`. Real time: e2e only. */
async function waitFor(what: string, probe: () => Promise<boolean>, timeoutMs: number) {
  const start = performance.now();
  while (!(await probe())) {
    if (performance.now() - start > timeoutMs) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Resolves with `promise`, or rejects after `ms`. */
async function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took over ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Starts main.ts, connects one player, sends SIGTERM; checks the close and the exit. */
async function shutdownWithPlayer(opts: { playing: boolean }): Promise<void> {
  const port = freePort();
  const base = `http://127.0.0.1:${port}`;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN],
    env: { PORT: String(port), HOST: "127.0.0.1", LOG_LEVEL: "warn" },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stdout = child.stdout.text();
  const stderr = child.stderr.text();
  try {
    await waitFor("/healthz", async () => {
      try {
        const res = await fetch(`${base}/healthz`);
        const body = await res.json();
        return res.status === 200 && body.ok === true;
      } catch {
        return false;
      }
    }, 30_000);

    const client = connectClient(`ws://127.0.0.1:${port}/ws`, {
      name: "Last Player",
      now: () => performance.now(),
    });
    await waitFor(
      "the hello to be answered",
      () => Promise.resolve(client.runtime.instanceId === "hub"),
      5000,
    );
    assert.equal(client.runtime.phase, "playing");
    // A player in the middle of a game sends an input frame every tick.
    const loop = opts.playing
      ? setInterval(() => client.runtime.update(performance.now(), () => IDLE), 8)
      : undefined;

    const signalledAt = performance.now();
    child.kill("SIGTERM");
    const closed = await within(5000, "the close", client.closed);
    clearInterval(loop);
    assert.equal(closed.code, CloseCode.ServerRestarting);
    assert.equal(closed.reason, "server restarting");
    assert.equal(client.runtime.closeReason, "server restarting", "what the player is shown");

    const status = await within(5000, "the exit", child.status);
    const exitMs = performance.now() - signalledAt;
    console.log(
      `closed with ${closed.code} "${closed.reason}", exit ${status.code} after ${
        exitMs.toFixed(0)
      } ms`,
    );
    assert.equal(status.code, 0, await stderr);
    assert.ok(exitMs < 5000, `exited after ${exitMs.toFixed(0)} ms`);
    assert.match(await stdout, /play at http:\/\/127\.0\.0\.1:\d+\//);
    assert.equal((await stderr).trim(), "", "nothing on stderr");
  } finally {
    try {
      child.kill("SIGKILL");
    } catch {
      // Already gone: the normal case.
    }
    await child.status;
    await stdout;
    await stderr;
  }
}

Deno.test('SIGTERM closes a connected player with 4009 "server restarting" and exits 0 within 5 s', async () => {
  await shutdownWithPlayer({ playing: false });
});

Deno.test("SIGTERM closes a player who keeps sending input with 4009 too", async () => {
  await shutdownWithPlayer({ playing: true });
});

Deno.test("PORT=abc stops start-up with status 2 and a message naming PORT", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN],
    env: { PORT: "abc", LOG_LEVEL: "warn" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 2, stderr);
  assert.match(stderr, /^Invalid configuration: PORT="abc" must be an integer/m);
  assert.equal(new TextDecoder().decode(out.stdout), "", "it never started listening");
});
