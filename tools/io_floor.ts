/**
 * `deno task io-floor`: what the runtime and the kernel alone charge a server process
 * for the game's message rates, with no game at all. A plain TCP server pinned to CPU 0
 * (as `deno task loadtest` pins the real one) writes each client a 60-byte frame 20
 * times a second (a third of them on each tick of a 60 Hz loop, as snapshots go) and
 * reads the 20 bytes each client sends 15 times a second (an input batch per 4 ticks);
 * the clients run in another process pinned to CPU 1. It prints, per client count, the
 * server's CPU ms per tick (from /proc, all threads, user and system), the I/O per
 * second and the CPU per I/O. Whatever the game does comes on top of this floor.
 * `--native` serves through the C library's sockets as the front door does by default
 * (net/server/native_tcp.ts: reads pushed from one poll at the start of each tick, writes
 * made on the spot);
 * without it, through Deno's (a read op pending per client, a write op per frame).
 *
 *   deno task io-floor [--clients=400,800] [--seconds=10] [--native]
 */
import { freePort } from "./redis_server.ts";
import { command, cpuMs, hasTaskset } from "./loadtest.ts";
import { NativeTcp } from "../net/server/native_tcp.ts";
import type { DoorConn } from "../net/server/front_door.ts";
import { flagValue } from "./args.ts";

const TICK_MS = 1000 / 60;
const FRAME = new Uint8Array(60).fill(7);
const INPUT = new Uint8Array(20).fill(3);

function arg(name: string, fallback: string): string {
  return flagValue(Deno.args, name) ?? fallback;
}

/** What the server needs of a connection: Deno's TcpConn, or the C library's. */
type FloorConn = Pick<DoorConn, "read" | "write" | "onData"> & { setNoDelay?(on: boolean): void };

/** The server: accepts, reads everything, writes each client 20 frames a second. */
async function serve(port: number, native: boolean): Promise<void> {
  // As main.ts runs them: polled at the start of each tick, by a timer only if that stalls.
  const tcp = native ? NativeTcp.open({ pollMs: TICK_MS + 4 }) : undefined;
  if (native && !tcp) throw new Error("--native: the C library's sockets need Linux and FFI");
  const at = { hostname: "127.0.0.1", port };
  const listener: { accept(): Promise<FloorConn> } = tcp?.listen(at) ?? Deno.listen(at);
  const conns: FloorConn[] = [];
  let reads = 0;
  let writes = 0;
  const readLoop = async (conn: FloorConn) => {
    if (conn.onData) {
      conn.onData((chunk) => {
        if (chunk) reads++;
      });
      return;
    }
    const buf = new Uint8Array(4096);
    try {
      while ((await conn.read(buf)) !== null) reads++;
    } catch {
      // the client went away
    }
  };
  (async () => {
    for (;;) {
      const conn = await listener.accept();
      conn.setNoDelay?.(true); // (the C library's sockets are made so)
      conns.push(conn);
      void readLoop(conn);
    }
  })();
  let tick = 0;
  let next = performance.now() + TICK_MS;
  const step = () => {
    tcp?.poll();
    const slot = tick++ % 3;
    for (let i = slot; i < conns.length; i += 3) {
      writes++;
      conns[i].write(FRAME).catch(() => {});
    }
    next += TICK_MS;
    setTimeout(step, Math.max(0, next - performance.now() - 1));
  };
  setTimeout(step, TICK_MS);
  // The driver asks for counts on stdin; one line out per line in.
  const decoder = new TextDecoder();
  for await (const chunk of Deno.stdin.readable) {
    if (decoder.decode(chunk).includes("stop")) Deno.exit(0);
    console.log(JSON.stringify({ reads, writes, ticks: tick, clients: conns.length }));
  }
}

/** The clients: each sends 20 bytes every 4 ticks (staggered) and reads all it gets. */
async function clients(port: number, n: number): Promise<void> {
  const conns: Deno.TcpConn[] = [];
  for (let i = 0; i < n; i++) {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    conn.setNoDelay(true);
    conns.push(conn);
    void (async () => {
      const buf = new Uint8Array(4096);
      try {
        while ((await conn.read(buf)) !== null) { /* read and drop */ }
      } catch {
        // closed
      }
    })();
  }
  let tick = 0;
  setInterval(() => {
    const slot = tick++ % 4;
    for (let i = slot; i < conns.length; i += 4) conns[i].write(INPUT).catch(() => {});
  }, TICK_MS);
  console.log("ready");
  await new Promise(() => {});
}

async function lineOf(reader: ReadableStreamDefaultReader<string>): Promise<string> {
  const { value } = await reader.read();
  return value ?? "";
}

async function measure(n: number, seconds: number, native: boolean): Promise<unknown> {
  const port = freePort();
  const self = new URL(import.meta.url).pathname;
  const pin = await hasTaskset();
  const pinned = (cpu: string, role: string, extra: string[] = []) => {
    const run = command(pin ? cpu : undefined, [
      "run",
      "-A",
      self,
      `--role=${role}`,
      `--port=${port}`,
      ...extra,
    ]);
    return new Deno.Command(run.cmd, {
      args: run.args,
      stdin: "piped",
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
  };
  const server = pinned("0", "server", native ? ["--native"] : []);
  await new Promise((r) => setTimeout(r, 500));
  const bots = pinned("1", "clients", [`--n=${n}`]);
  const botLines = bots.stdout.pipeThrough(new TextDecoderStream()).getReader();
  await lineOf(botLines); // "ready": every client connected
  const serverLines = server.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const writer = server.stdin.getWriter();
  const ask = async () => {
    await writer.write(new TextEncoder().encode("count\n"));
    return JSON.parse(await lineOf(serverLines));
  };
  await new Promise((r) => setTimeout(r, 2000)); // warm-up
  const a = await ask();
  const cpuA = await cpuMs(server.pid);
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const b = await ask();
  const cpuB = await cpuMs(server.pid);
  await writer.write(new TextEncoder().encode("stop\n"));
  await server.status;
  bots.kill();
  await bots.status;
  const ticks = b.ticks - a.ticks;
  const ops = b.reads - a.reads + b.writes - a.writes;
  return {
    clients: b.clients,
    sockets: native ? "native" : "deno",
    pinned: pin,
    serverCpuMsPerTick: Math.round(((cpuB - cpuA) / ticks) * 100) / 100,
    writesPerSec: Math.round((b.writes - a.writes) / seconds),
    readsPerSec: Math.round((b.reads - a.reads) / seconds),
    cpuUsPerIo: Math.round(((cpuB - cpuA) * 1000) / ops * 10) / 10,
    loadAverage1m: Math.round(Deno.loadavg()[0] * 100) / 100,
  };
}

const role = arg("role", "driver");
const native = Deno.args.includes("--native");
if (role === "server") await serve(Number(arg("port", "0")), native);
else if (role === "clients") await clients(Number(arg("port", "0")), Number(arg("n", "0")));
else {
  const seconds = Number(arg("seconds", "10"));
  for (const n of arg("clients", "400,800").split(",").map(Number)) {
    console.log(JSON.stringify(await measure(n, seconds, native)));
  }
}
