/**
 * WebTransport beside the WebSocket: HTTP/3 over QUIC through Deno's QuicEndpoint and
 * upgradeWebTransport (needs --unstable-net). Snapshots leave as unreliable datagrams
 * (no head-of-line blocking behind a lost packet), input arrives as datagrams, and
 * everything else travels on one reliable ordered stream the client opens with its
 * hello. Connections see only the Transport interface.
 */
import { MessageStreamReader } from "../wire/frames.ts";
import { packFrame } from "../wire/frames.ts";
import { ownBytes } from "../wire/mod.ts";
import { CloseCode } from "../wire/protocol.ts";
import type { CertificatePair } from "./certs.ts";
import { toBase64 } from "./certs.ts";
import type { GameServer, Logger } from "./server.ts";
import { clampReason, EarlierTurns, type LoopTurns, type Transport } from "./transport.ts";

/** The path the client opens: `https://HOST:PORT/wt`. */
export const WEBTRANSPORT_PATH = "/wt";

/** A WebTransport session as Deno's server side gives it. */
type Session = WebTransport & { url: string };
type Writer = WritableStreamDefaultWriter<Uint8Array>;

/** True when this Deno exposes QUIC (started with --unstable-net). */
export function quicAvailable(): boolean {
  return typeof (Deno as { QuicEndpoint?: unknown }).QuicEndpoint === "function";
}

/** Transport over one WebTransport session. */
export class WebTransportTransport implements Transport {
  readonly kind = "webtransport";
  readonly datagrams = true;
  readonly #session: Session;
  readonly #stream: Writer;
  readonly #datagrams: Writer;
  readonly #maxDatagramBytes: number;
  readonly #queued: Uint8Array[] = [];
  /** This tick's snapshot, sent at flush. */
  #datagram: Uint8Array | undefined;
  /** The last snapshot, to send again at the next flush (a lossy link). */
  #again: Uint8Array | undefined;
  #copies: 1 | 2 = 1;
  /** Bytes written to the stream and not yet taken by QUIC: the stream's backlog. */
  #inFlightBytes = 0;
  /** What the stream held from earlier turns of the event loop (transport.ts). */
  readonly #earlier: EarlierTurns;
  /** Datagrams written in the turn of the last flush (still queued until the loop turns). */
  #turnDatagrams = 0;
  #closing = false;

  constructor(
    session: Session,
    opts: { stream: Writer; datagrams: Writer; maxDatagramBytes: number; turns: LoopTurns },
  ) {
    this.#session = session;
    this.#stream = opts.stream;
    this.#datagrams = opts.datagrams;
    this.#maxDatagramBytes = opts.maxDatagramBytes;
    this.#earlier = new EarlierTurns(opts.turns);
  }

  /** What waits to leave: this tick's messages and stream writes QUIC has not taken. */
  get bufferedBytes(): number {
    let queued = this.#inFlightBytes;
    for (const q of this.#queued) queued += q.byteLength;
    return queued;
  }

  sendReliable(data: Uint8Array): void {
    if (!this.#closing) this.#queued.push(data);
  }

  sendLatest(data: Uint8Array): boolean {
    if (this.#closing) return false;
    if (data.byteLength > this.#maxDatagramBytes) {
      // Too big for one datagram (a crowded hub): the stream, newest-wins as on a WebSocket.
      if (this.#earlier.older(this.#inFlightBytes) > 0) return false;
      this.#queued.push(data);
      return true;
    }
    // A datagram from an earlier turn still waiting for the congestion window: this one
    // would queue behind it. The writer holds one datagram (its desired size counts them),
    // and those written in this turn wait for the loop to turn, however open the window.
    const thisTurn = this.#earlier.flushedThisTurn ? this.#turnDatagrams : 0;
    if ((this.#datagrams.desiredSize ?? 1) + thisTurn <= 0) return false;
    this.#datagram = data;
    return true;
  }

  flush(): void {
    if (this.#earlier.flushing(this.#inFlightBytes)) this.#turnDatagrams = 0;
    if (this.#queued.length > 0) {
      // The stream queues what QUIC has not taken: a buffer of its own, not a view that
      // would keep a message slab alive while a slow client reads (net/wire/slab.ts).
      const frame = packFrame(this.#queued, { own: true });
      this.#queued.length = 0;
      this.#inFlightBytes += frame.byteLength;
      this.#stream.write(frame).then(
        () => this.#inFlightBytes -= frame.byteLength,
        () => {},
      );
    }
    // A datagram is written once or twice (`#again`): in a buffer of its own, as the frame.
    const datagram = this.#datagram && ownBytes(this.#datagram);
    this.#datagram = undefined;
    if (datagram) {
      this.#datagrams.write(datagram).catch(() => {});
      this.#turnDatagrams++;
      this.#again = this.#copies === 2 ? datagram : undefined;
    } else if (this.#again) {
      // The copy, one tick later: a loss that takes the first rarely takes both.
      this.#datagrams.write(this.#again).catch(() => {});
      this.#turnDatagrams++;
      this.#again = undefined;
    }
  }

  setLatestCopies(copies: 1 | 2): void {
    this.#copies = copies;
  }

  /** Flushes, waits up to DRAIN_WAIT_MS for the stream to take it, then closes the session. */
  close(code: number, reason: string): void {
    if (this.#closing) return;
    this.flush();
    this.#closing = true;
    const text = clampReason(reason);
    const startedMs = performance.now();
    const attempt = () => {
      if (this.#inFlightBytes > 0 && performance.now() - startedMs < DRAIN_WAIT_MS) {
        setTimeout(attempt, DRAIN_POLL_MS);
        return;
      }
      try {
        this.#session.close({ closeCode: code, reason: text });
      } catch {
        // already closed by the peer
      }
    };
    attempt();
  }
}

const DRAIN_POLL_MS = 10;
const DRAIN_WAIT_MS = 500;
/** Bytes a WebTransport datagram spends inside the QUIC datagram (its session id). */
const DATAGRAM_FRAMING_BYTES = 8;
/** Largest single message the reader buffers before the connection's own limits apply. */
const MAX_STREAM_MESSAGE_BYTES = 64 * 1024;

/** Options of the WebTransport listener. */
export interface WebTransportServerOptions {
  readonly hostname: string;
  /** UDP port; 0 picks a free one (tests). */
  readonly port: number;
  /** The certificate to serve; called at start and again at every rotation. */
  readonly certificate: () => Promise<CertificatePair>;
  /** How often to call `certificate` again (a fresh self-signed one, or renewed files). */
  readonly rotateEveryMs: number;
  readonly log?: Logger;
}

/** Accepts WebTransport sessions on a UDP port and hands them to the game server. */
export class WebTransportServer {
  readonly #game: GameServer;
  readonly #opts: WebTransportServerOptions;
  readonly #sessions = new Set<Session>();
  #endpoint: Deno.QuicEndpoint | undefined;
  #listener: Deno.QuicListener | undefined;
  #cert: CertificatePair | undefined;
  #rotateTimer: ReturnType<typeof setInterval> | undefined;

  constructor(game: GameServer, opts: WebTransportServerOptions) {
    this.#game = game;
    this.#opts = opts;
  }

  /** Binds the UDP port and starts accepting. */
  async start(): Promise<void> {
    this.#endpoint = new Deno.QuicEndpoint({
      hostname: this.#opts.hostname,
      port: this.#opts.port,
    });
    await this.rotate();
    this.#rotateTimer = setInterval(() => {
      this.rotate().catch((err) => this.#log("webtransport_rotate_failed", { error: String(err) }));
    }, this.#opts.rotateEveryMs);
  }

  /** The UDP port bound. */
  get port(): number {
    if (!this.#endpoint) throw new Error("Cannot tell the port: the endpoint is not started");
    return this.#endpoint.addr.port;
  }

  /**
   * Base64 SHA-256 hashes the page passes as `serverCertificateHashes`: the current
   * self-signed certificate's, or none when an operator's certificate is in use.
   */
  get certificateHashes(): string[] {
    return this.#cert?.selfSigned ? [toBase64(this.#cert.sha256)] : [];
  }

  /** Open sessions. */
  get sessions(): number {
    return this.#sessions.size;
  }

  /**
   * Takes a fresh certificate and listens with it. Sessions already open keep theirs;
   * new ones get the new certificate, whose hash the page fetches before connecting.
   */
  async rotate(): Promise<void> {
    const endpoint = this.#endpoint;
    if (!endpoint) return;
    const cert = await this.#opts.certificate();
    // One listener per endpoint: the old one stops first (a handshake already under
    // way still completes on it), then the new certificate listens on the same port.
    this.#listener?.stop();
    const listener = endpoint.listen({
      cert: cert.certPem,
      key: cert.keyPem,
      alpnProtocols: ["h3"],
    });
    this.#listener = listener;
    this.#cert = cert;
    this.#log("webtransport_certificate", {
      port: endpoint.addr.port,
      selfSigned: cert.selfSigned,
      notAfter: new Date(cert.notAfterMs).toISOString(),
    });
    this.#accept(listener);
  }

  /** Stops accepting and closes every session (the connections were closed by the game). */
  close(): void {
    clearInterval(this.#rotateTimer);
    this.#listener?.stop();
    for (const s of this.#sessions) {
      try {
        s.close({ closeCode: CloseCode.ServerRestarting, reason: "server restarting" });
      } catch {
        // already gone
      }
    }
    this.#endpoint?.close();
    this.#endpoint = undefined;
  }

  #log(event: string, fields: Record<string, unknown>): void {
    this.#opts.log?.(event, fields);
  }

  async #accept(listener: Deno.QuicListener): Promise<void> {
    try {
      for await (const incoming of listener) {
        this.#session(incoming).catch((err) =>
          this.#log("webtransport_session_failed", { error: String(err) })
        );
      }
    } catch {
      // the listener stopped (rotation or shutdown)
    }
  }

  async #session(incoming: Deno.QuicIncoming): Promise<void> {
    const conn = await incoming.accept();
    const ip = conn.remoteAddr.hostname;
    const session = await Deno.upgradeWebTransport(conn);
    await session.ready;
    this.#sessions.add(session);
    session.closed.catch(() => {}).finally(() => this.#sessions.delete(session));
    if (new URL(session.url).pathname !== WEBTRANSPORT_PATH) {
      session.close({ closeCode: CloseCode.BadMessage, reason: "unknown WebTransport path" });
      return;
    }
    // The client opens one bidirectional stream and says hello on it.
    const streams = session.incomingBidirectionalStreams.getReader();
    const first = await withTimeout(streams.read(), this.#game.limits.handshakeTimeoutMs);
    streams.releaseLock();
    if (!first || first.done) {
      session.close({ closeCode: CloseCode.HandshakeTimeout, reason: "no stream within 5 s" });
      return;
    }
    const stream = first.value;
    const datagramWriter = session.datagrams.writable.getWriter();
    const transport = new WebTransportTransport(session, {
      stream: stream.writable.getWriter(),
      datagrams: datagramWriter,
      maxDatagramBytes: conn.maxDatagramSize - DATAGRAM_FRAMING_BYTES,
      turns: this.#game.scheduler.stats,
    });
    const connection = this.#game.open(transport, ip);
    session.closed.then(
      (info) => connection.closed(String(info.closeCode), info.reason || "closed by client"),
      () => connection.closed("error", "session lost"),
    );
    pumpDatagrams(session, (d) => connection.receiveDatagram(d));
    const reader = new MessageStreamReader({ maxMessageBytes: MAX_STREAM_MESSAGE_BYTES });
    try {
      for await (const chunk of stream.readable) {
        let messages: Uint8Array[];
        try {
          messages = reader.push(chunk);
        } catch (err) {
          connection.close(CloseCode.BadMessage, (err as Error).message);
          return;
        }
        for (const m of messages) connection.receive(m);
      }
    } catch {
      // the session ended; `closed` reports it
    }
  }
}

async function pumpDatagrams(session: Session, onDatagram: (d: Uint8Array) => void) {
  try {
    for await (const d of session.datagrams.readable) onDatagram(d);
  } catch {
    // the session ended
  }
}

/** The promise's value, or undefined if `ms` pass first. */
async function withTimeout<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<undefined>((r) => timer = setTimeout(() => r(undefined), ms));
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
