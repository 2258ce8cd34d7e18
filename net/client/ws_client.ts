/**
 * The client's two ways to the server, each a `Link` a ClientRuntime can drive:
 * a WebSocket (one ordered stream; binary CBOR only) and WebTransport (one
 * reliable stream the client opens with its hello, plus datagrams). They work
 * the same in the browser and in Deno.
 */
import { MessageStreamReader } from "../wire/frames.ts";
import type { TransportKind } from "../wire/protocol.ts";

/** TCP/IP headers counted per WebSocket frame on the wire (IPv4 20 + TCP 20 + options 12). */
export const TCP_IP_BYTES_PER_FRAME = 52;

/** Bytes of a WebSocket frame header: 2, 4 or 10, plus the 4-byte mask client → server. */
export function webSocketHeaderBytes(payloadBytes: number, masked: boolean): number {
  const base = payloadBytes < 126 ? 2 : payloadBytes < 65536 ? 4 : 10;
  return base + (masked ? 4 : 0);
}

/** Frames and bytes on the wire, headers included. */
export interface WireCount {
  framesIn: number;
  framesOut: number;
  /** WebSocket frames: payload + frame header + TCP/IP. WebTransport: payload only. */
  bytesIn: number;
  bytesOut: number;
}

/** What a link reports back. */
export interface LinkEvents {
  /** The link is open: say hello now. */
  readonly onOpen: () => void;
  /** A frame from the ordered channel, or one datagram. */
  readonly onData: (data: Uint8Array) => void;
  readonly onClose: (code: number, reason: string) => void;
}

/** An open (or opening) way to the server. */
export interface Link {
  readonly kind: TransportKind;
  readonly wire: WireCount;
  /** One frame on the ordered, reliable channel. */
  send(data: Uint8Array): void;
  /** One datagram; absent on a WebSocket. */
  readonly sendDatagram?: (data: Uint8Array) => void;
  close(code: number, reason: string): void;
}

/** Opens a WebSocket to `url`. */
export function openWebSocket(url: string, events: LinkEvents): Link {
  const socket = new WebSocket(url);
  socket.binaryType = "arraybuffer";
  const wire: WireCount = { framesIn: 0, framesOut: 0, bytesIn: 0, bytesOut: 0 };
  socket.onopen = () => events.onOpen();
  socket.onmessage = (evt) => {
    if (!(evt.data instanceof ArrayBuffer)) return;
    const n = evt.data.byteLength;
    wire.framesIn++;
    wire.bytesIn += n + webSocketHeaderBytes(n, false) + TCP_IP_BYTES_PER_FRAME;
    events.onData(new Uint8Array(evt.data));
  };
  socket.onclose = (evt) => events.onClose(evt.code, evt.reason);
  return {
    kind: "websocket",
    wire,
    send(data) {
      if (socket.readyState !== WebSocket.OPEN) return;
      wire.framesOut++;
      wire.bytesOut += data.byteLength + webSocketHeaderBytes(data.byteLength, true) +
        TCP_IP_BYTES_PER_FRAME;
      socket.send(data);
    },
    close(code, reason) {
      if (socket.readyState <= WebSocket.OPEN) socket.close(code, reason);
    },
  };
}

/** Where WebTransport listens and how to trust it. */
export interface WebTransportTarget {
  /** https://HOST:PORT/wt */
  readonly url: string;
  /** Base64 SHA-256 of a self-signed certificate; empty for a CA-signed one. */
  readonly certificateHashes: readonly string[];
}

/** True when this runtime has a WebTransport client (browsers; Deno with --unstable-net). */
export function webTransportAvailable(): boolean {
  return typeof (globalThis as { WebTransport?: unknown }).WebTransport === "function";
}

/**
 * Opens a WebTransport session and its one stream, or rejects if that takes longer
 * than `timeoutMs` (UDP blocked: QUIC would otherwise wait ~10 s before failing).
 * It is open once this resolves; `events.onOpen` is not called.
 */
export async function openWebTransport(
  target: WebTransportTarget,
  opts: { timeoutMs: number; events: LinkEvents },
): Promise<Link> {
  const hashes = target.certificateHashes.map((h) => ({
    algorithm: "sha-256",
    value: Uint8Array.from(atob(h), (c) => c.charCodeAt(0)),
  }));
  const session = new WebTransport(
    target.url,
    hashes.length > 0 ? { serverCertificateHashes: hashes } : {},
  );
  session.closed.catch(() => {});
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`WebTransport did not open within ${opts.timeoutMs} ms`)),
      opts.timeoutMs,
    );
  });
  let stream: WebTransportBidirectionalStream;
  try {
    stream = await Promise.race([
      session.ready.then(() => session.createBidirectionalStream()),
      timeout,
    ]);
  } catch (err) {
    try {
      session.close();
    } catch {
      // not open yet: closing is best effort
    }
    throw err;
  } finally {
    clearTimeout(timer);
  }
  const writer = stream.writable.getWriter();
  const datagrams = session.datagrams.writable.getWriter();
  const wire: WireCount = { framesIn: 0, framesOut: 0, bytesIn: 0, bytesOut: 0 };
  const { events } = opts;
  const count = (n: number) => {
    wire.framesIn++;
    wire.bytesIn += n;
  };
  let ended = false;
  const end = (code: number, reason: string) => {
    if (ended) return;
    ended = true;
    events.onClose(code, reason);
  };
  session.closed.then(
    (info) => end(info.closeCode ?? 0, info.reason ?? ""),
    (err) => end(1006, `connection lost (${(err as Error).message})`),
  );
  readStream(stream.readable, (m) => {
    count(m.byteLength);
    events.onData(m);
  });
  readDatagrams(session, (d) => {
    count(d.byteLength);
    events.onData(d);
  });
  return {
    kind: "webtransport",
    wire,
    send(data) {
      if (ended) return;
      wire.framesOut++;
      wire.bytesOut += data.byteLength;
      writer.write(data).catch(() => {});
    },
    sendDatagram(data) {
      if (ended) return;
      wire.framesOut++;
      wire.bytesOut += data.byteLength;
      datagrams.write(data).catch(() => {});
    },
    close(code, reason) {
      try {
        session.close({ closeCode: code, reason });
      } catch {
        // already closed
      }
    },
  };
}

async function readStream(
  readable: ReadableStream<Uint8Array>,
  onMessage: (m: Uint8Array) => void,
) {
  // Messages may straddle chunks; each one is a valid frame on its own.
  const messages = new MessageStreamReader({ maxMessageBytes: MAX_SERVER_MESSAGE_BYTES });
  const reader = readable.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      for (const m of messages.push(value)) onMessage(m);
    }
  } catch {
    // the session ended; `closed` says how
  }
}

async function readDatagrams(session: WebTransport, onDatagram: (d: Uint8Array) => void) {
  const reader = session.datagrams.readable.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      onDatagram(value);
    }
  } catch {
    // the session ended
  }
}

/** An Enter with every live bullet of a crowded fight is the largest server message. */
const MAX_SERVER_MESSAGE_BYTES = 4 * 1024 * 1024;

/**
 * Why the server refused a socket that never opened: a plain GET of the same URL
 * answers a refusal with its status and `{ code, reason }`, or 426 when nothing
 * stands in the way (then the failure was the network's).
 */
export async function askWhyRefused(
  wsUrl: string,
): Promise<{ code: number; reason: string } | undefined> {
  try {
    const res = await fetch(wsUrl.replace(/^ws/, "http"), {
      signal: AbortSignal.timeout(3000),
      cache: "no-store",
    });
    if (res.status === 426 || res.ok) {
      await res.body?.cancel();
      return undefined;
    }
    const body = await res.json();
    if (typeof body?.code === "number" && typeof body?.reason === "string") {
      return { code: body.code, reason: body.reason };
    }
  } catch {
    // Unreachable or not our server: the socket's own failure stands.
  }
  return undefined;
}
