/**
 * A TCP relay on 127.0.0.1 that puts a simulated link between a real client (a
 * browser, a bot) and a real server: every byte goes through a LinkPath in its
 * direction, in order, so WebSocket frames see the delay, jitter, stalls and
 * outages a real path would give them. Uses Deno's TCP APIs; for tests and tools.
 */
import { LinkPipe, LinkSim } from "./path.ts";
import type { LinkSpec } from "./spec.ts";

/** The real clock, as the link simulator wants it. */
const REAL_CLOCK = {
  now: () => performance.now(),
  setTimer: (fn: () => void, ms: number) => setTimeout(fn, ms) as unknown as number,
  clearTimer: (id: number) => clearTimeout(id),
};

/** Options of a relay. */
export interface RelayOptions {
  /** Where the real server listens. */
  readonly target: { readonly hostname: string; readonly port: number };
  readonly spec: LinkSpec;
  /** Port to listen on (0 = any free one). */
  readonly port?: number;
}

/** What a relay has carried. */
export interface RelayStats {
  connections: number;
  bytesUp: number;
  bytesDown: number;
  /** Connections closed by `cut(…, { reset: true })`. */
  resets: number;
}

interface Pair {
  readonly client: Deno.TcpConn;
  readonly server: Deno.TcpConn;
  /** Stops both directions at once: pending bytes are dropped, the writers end. */
  readonly stops: (() => void)[];
  dropped: boolean;
}

/**
 * A listening relay. One LinkSim serves every connection through it (they share
 * one path, as a browser's page load and its WebSocket do); each connection is its
 * own ordered stream. `await using` closes it.
 */
export class LinkRelay implements AsyncDisposable {
  readonly stats: RelayStats = { connections: 0, bytesUp: 0, bytesDown: 0, resets: 0 };
  readonly link: LinkSim;
  readonly #listener: Deno.TcpListener;
  readonly #target: RelayOptions["target"];
  readonly #pairs = new Set<Pair>();
  readonly #tasks = new Set<Promise<void>>();
  #refuseUntilMs = -Infinity;
  #closed = false;

  private constructor(listener: Deno.TcpListener, opts: RelayOptions) {
    this.#listener = listener;
    this.#target = opts.target;
    this.link = new LinkSim(opts.spec, { startMs: REAL_CLOCK.now() });
    this.#track(this.#accept());
  }

  /** Starts listening on 127.0.0.1. */
  static start(opts: RelayOptions): LinkRelay {
    const listener = Deno.listen({ hostname: "127.0.0.1", port: opts.port ?? 0 });
    return new LinkRelay(listener, opts);
  }

  /** The port clients connect to. */
  get port(): number {
    return (this.#listener.addr as Deno.NetAddr).port;
  }

  /** A URL through the relay: `relay.url("ws", "/ws")`. */
  url(scheme: "http" | "ws", path = "/"): string {
    return `${scheme}://127.0.0.1:${this.port}${path}`;
  }

  /** Connections open now. */
  get open(): number {
    return this.#pairs.size;
  }

  /**
   * Takes the link down for `durationMs`. By default nothing moves meanwhile and
   * everything in flight arrives once it is back (a radio dropout). With `reset`,
   * every open connection is closed at once and new ones are refused until then
   * (the path broke: clients must reconnect).
   */
  cut(durationMs: number, opts: { reset?: boolean } = {}): void {
    const now = REAL_CLOCK.now();
    if (!opts.reset) {
      this.link.cut(now, durationMs);
      return;
    }
    this.#refuseUntilMs = now + durationMs;
    for (const pair of [...this.#pairs]) {
      this.stats.resets++;
      this.#drop(pair);
    }
  }

  async #accept(): Promise<void> {
    for (;;) {
      let client: Deno.TcpConn;
      try {
        client = await this.#listener.accept();
      } catch {
        return; // listener closed
      }
      if (REAL_CLOCK.now() < this.#refuseUntilMs) {
        client.close();
        continue;
      }
      this.#track(this.#relay(client));
    }
  }

  async #relay(client: Deno.TcpConn): Promise<void> {
    let server: Deno.TcpConn;
    try {
      server = await Deno.connect({ ...this.#target, transport: "tcp" });
    } catch {
      client.close();
      return;
    }
    this.stats.connections++;
    const pair: Pair = { client, server, stops: [], dropped: false };
    this.#pairs.add(pair);
    const up = this.#pump(pair, { from: client, to: server, path: this.link.up, dir: "up" });
    const down = this.#pump(pair, { from: server, to: client, path: this.link.down, dir: "down" });
    await Promise.all([up, down]);
    this.#drop(pair);
  }

  /** Reads `from`, sends each chunk through the path, writes it to `to` in order. */
  async #pump(
    pair: Pair,
    opts: { from: Deno.TcpConn; to: Deno.TcpConn; path: LinkSim["up"]; dir: "up" | "down" },
  ): Promise<void> {
    // null = the sender finished (half-close after the last bytes); "stop" = dropped.
    const writes: (Uint8Array | null | "stop")[] = [];
    let wake: (() => void) | undefined;
    const push = (item: Uint8Array | null | "stop") => {
      writes.push(item);
      wake?.();
    };
    const pipe = new LinkPipe<Uint8Array | null>(opts.path, { clock: REAL_CLOCK, deliver: push });
    pair.stops.push(() => {
      pipe.clear();
      writes.length = 0;
      push("stop");
    });
    const writer = (async () => {
      for (;;) {
        if (writes.length === 0) await new Promise<void>((r) => wake = r);
        wake = undefined;
        const chunk = writes.shift();
        if (chunk === undefined) continue;
        if (chunk === "stop") return;
        if (chunk === null) {
          await opts.to.closeWrite().catch(() => {});
          return;
        }
        try {
          let off = 0;
          while (off < chunk.length) off += await opts.to.write(chunk.subarray(off));
        } catch {
          return;
        }
      }
    })();
    const buf = new Uint8Array(64 * 1024);
    for (;;) {
      let n: number | null;
      try {
        n = await opts.from.read(buf);
      } catch {
        n = null;
      }
      if (n === null || pair.dropped) break;
      if (opts.dir === "up") this.stats.bytesUp += n;
      else this.stats.bytesDown += n;
      pipe.send(buf.slice(0, n));
    }
    // The end of the stream travels the path too, behind the last bytes.
    if (!pair.dropped) pipe.send(null);
    await writer;
  }

  #drop(pair: Pair): void {
    if (pair.dropped) return;
    pair.dropped = true;
    this.#pairs.delete(pair);
    for (const stop of pair.stops) stop();
    for (const c of [pair.client, pair.server]) {
      try {
        c.close();
      } catch {
        // already closed
      }
    }
  }

  #track(task: Promise<void>): void {
    this.#tasks.add(task);
    task.finally(() => this.#tasks.delete(task));
  }

  /** Stops listening, closes every connection and waits for the pumps to end. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#listener.close();
    for (const pair of [...this.#pairs]) this.#drop(pair);
    while (this.#tasks.size > 0) await Promise.allSettled([...this.#tasks]);
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
