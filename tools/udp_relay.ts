/**
 * A UDP relay in front of one server address: every datagram a client sends to the
 * relay goes on to the server from a socket of its own for that client, and the
 * server's answers come back the same way. It counts every datagram both ways (the
 * smoke's WebTransport wire figures are these real sizes plus 28 B of UDP/IP), and
 * can drop a share of them at random and delay each by latency ± jitter (the loss
 * test). For loopback use by tools and tests; needs --unstable-net.
 */
import { Rng } from "../sim/mod.ts";

/** Datagrams and bytes one way. */
export interface RelayDirection {
  datagrams: number;
  /** UDP payload bytes, as QUIC put them on the wire. */
  bytes: number;
  dropped: number;
}

/** Options of a relay. */
export interface UdpRelayOptions {
  /** Where the server listens. */
  readonly target: Deno.NetAddr;
  /** Share of datagrams dropped, each way (0–1). */
  readonly loss?: number;
  /** One-way delay added to every datagram. */
  readonly latencyMs?: number;
  /** Uniform spread around the delay, ±. */
  readonly jitterMs?: number;
  readonly seed?: number;
  /** Sees every datagram that reaches the relay (before loss), with its size and direction. */
  readonly onDatagram?: (dir: "up" | "down", bytes: number) => void;
}

/** IPv4 (20 B) and UDP (8 B) headers around every datagram. */
export const UDP_IP_BYTES = 28;

/** A relay on 127.0.0.1 at a free port. */
export class UdpRelay {
  readonly up: RelayDirection = { datagrams: 0, bytes: 0, dropped: 0 };
  readonly down: RelayDirection = { datagrams: 0, bytes: 0, dropped: 0 };
  readonly #front: Deno.DatagramConn;
  readonly #opts: UdpRelayOptions;
  readonly #rng: Rng;
  readonly #flows = new Map<string, Deno.DatagramConn>();
  readonly #timers = new Set<ReturnType<typeof setTimeout>>();
  #closed = false;

  constructor(opts: UdpRelayOptions) {
    this.#opts = opts;
    this.#rng = new Rng(opts.seed ?? 1);
    this.#front = Deno.listenDatagram({ transport: "udp", hostname: "127.0.0.1", port: 0 });
    this.#pumpFront();
  }

  /** The port clients send to. */
  get port(): number {
    return (this.#front.addr as Deno.NetAddr).port;
  }

  /** Bytes on the wire each way: payload plus UDP/IP headers. */
  wireBytes(): { up: number; down: number } {
    return {
      up: this.up.bytes + UDP_IP_BYTES * this.up.datagrams,
      down: this.down.bytes + UDP_IP_BYTES * this.down.datagrams,
    };
  }

  /** Stops relaying and closes every socket. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
    for (const s of this.#flows.values()) s.close();
    this.#front.close();
  }

  /** Delivers `data` after the link's delay, unless the link loses it. */
  #pass(dir: RelayDirection, data: Uint8Array, send: () => Promise<unknown>): void {
    dir.datagrams++;
    dir.bytes += data.byteLength;
    this.#opts.onDatagram?.(dir === this.up ? "up" : "down", data.byteLength);
    const loss = this.#opts.loss ?? 0;
    if (loss > 0 && this.#rng.next() < loss) {
      dir.dropped++;
      return;
    }
    const jitter = this.#opts.jitterMs ?? 0;
    const delay = (this.#opts.latencyMs ?? 0) + (jitter > 0 ? this.#rng.range(-jitter, jitter) : 0);
    const go = () => {
      if (!this.#closed) send().catch(() => {});
    };
    if (delay <= 0) {
      go();
      return;
    }
    const t = setTimeout(() => {
      this.#timers.delete(t);
      go();
    }, delay);
    this.#timers.add(t);
  }

  async #pumpFront(): Promise<void> {
    try {
      for await (const [data, addr] of this.#front) {
        const client = addr as Deno.NetAddr;
        const flow = this.#flow(client);
        this.#pass(this.up, data, () => flow.send(data, this.#opts.target));
      }
    } catch {
      // closed
    }
  }

  /** The socket that speaks to the server for one client. */
  #flow(client: Deno.NetAddr): Deno.DatagramConn {
    const key = `${client.hostname}:${client.port}`;
    let flow = this.#flows.get(key);
    if (flow) return flow;
    flow = Deno.listenDatagram({ transport: "udp", hostname: "127.0.0.1", port: 0 });
    this.#flows.set(key, flow);
    const upstream = flow;
    (async () => {
      try {
        for await (const [data] of upstream) {
          this.#pass(this.down, data, () => this.#front.send(data, client));
        }
      } catch {
        // closed
      }
    })();
    return flow;
  }
}
