/**
 * One client socket from open to close: the per-connection audit (frame size, rate
 * and byte budgets, decoding, the handshake and idle timers, the cap on bytes
 * queued to a client that stops reading) and the hand-off of what it says to the
 * server. Bad input closes this connection only, with a Reject saying why.
 * The player behind it is a Session (net/server/session.ts), which outlives it.
 */
import { CONTENT_HASH } from "../../content/mod.ts";
import { MAX_CLIENT_MESSAGES_PER_FRAME, PONG_MAX_HOLD_MS } from "../../content/net_tuning.ts";
import { isOneMessage, splitFrame } from "../wire/frames.ts";
import {
  CodecError,
  decodeClientMessage,
  encodeServerMessage,
  MessageDecoder,
} from "../wire/codec.ts";
import {
  ClientKind,
  type ClientMessage,
  CloseCode,
  type NoticeCode,
  PROTOCOL_VERSION,
  ServerKind,
} from "../wire/protocol.ts";
import { Budget } from "./admission.ts";
import type { Instance } from "./instance.ts";
import { checkName } from "./names.ts";
import type { GameServer } from "./server.ts";
import type { Session } from "./session.ts";
import { SnapshotLossMeter } from "./snapshot_loss.ts";
import type { Transport, TransportKind } from "./transport.ts";

/** A message's kind is one CBOR byte: a code under 24. */
const KIND_CODES = 24;

/** Where a connection stands. */
export type ConnectionState = "handshake" | "playing" | "closed";

/** What an accepted hello said. */
export interface HelloInfo {
  /** The name, normalised (net/server/names.ts). */
  readonly name: string;
  /** The key no two players' names may share. */
  readonly nameKey: string;
  /** A transfer ticket from another process's Transfer message. */
  readonly ticket: string | undefined;
  /** A resume token from an earlier Welcome. */
  readonly resume: string | undefined;
}

/** One client socket. */
export class Connection {
  readonly id: number;
  readonly ip: string;
  /** The key its address is limited under (net/server/admission.ts). */
  readonly addressKey: string;
  readonly #server: GameServer;
  readonly #transport: Transport;
  // Its Input frames are lent: #handle offers each to the input queue, which copies it.
  readonly #decoder = new MessageDecoder({ reuseInputFrames: true });
  readonly #messages: Budget;
  readonly #bytes: Budget;
  #handshakeTimer: number | undefined;
  state: ConnectionState = "handshake";
  /** What its hello said, once valid. */
  hello: HelloInfo | undefined;
  /** Why its hello's resume token did not take (told after its Welcome). */
  resumeNotice: { code: NoticeCode; text: string } | undefined;
  /** The player this socket carries, once welcomed. */
  session: Session | undefined;
  /** When the last message arrived (the idle timeout counts from it). */
  lastMessageAtMs = 0;
  bytesIn = 0;
  bytesOut = 0;
  /** The snapshot tick the client says it holds, over datagrams or to resync (-1: none). */
  snapshotAck = -1;
  /** Messages sent on the ordered channel, by kind (`sent(kind)` reads it). */
  readonly #sentByKind = new Uint32Array(KIND_CODES);
  /** A ping waiting for a frame to ride in. */
  #pong: { clientTimeMs: number; atMs: number } | undefined;
  /** Something was queued since the last flush: a frame goes out anyway. */
  #sending = false;
  readonly #loss = new SnapshotLossMeter();
  #resync = false;

  constructor(
    server: GameServer,
    opts: { id: number; ip: string; addressKey: string; transport: Transport },
  ) {
    this.#server = server;
    this.id = opts.id;
    this.ip = opts.ip;
    this.addressKey = opts.addressKey;
    this.#transport = opts.transport;
    const limits = server.limits;
    const nowMs = server.clock.now();
    this.lastMessageAtMs = nowMs;
    this.#messages = new Budget({
      ratePerSec: limits.maxMessagesPerSec,
      burst: limits.maxMessagesPerSec * limits.burstSeconds,
      nowMs,
    });
    this.#bytes = new Budget({
      ratePerSec: limits.maxBytesPerSec,
      burst: limits.maxBytesPerSec * limits.burstSeconds,
      nowMs,
    });
    this.#handshakeTimer = server.clock.setTimer(() => {
      this.#handshakeTimer = undefined;
      this.close(CloseCode.HandshakeTimeout, "no hello within the handshake timeout");
    }, limits.handshakeTimeoutMs);
  }

  /** The player's id (0 before the hello is accepted). */
  get playerId(): number {
    return this.session?.playerId ?? 0;
  }

  /** The player's name ("" before a valid hello). */
  get name(): string {
    return this.session?.name ?? this.hello?.name ?? "";
  }

  /** The hello's transfer ticket, if it came from another process. */
  get ticket(): string | undefined {
    return this.hello?.ticket;
  }

  /** The instance the player is in. */
  get instance(): Instance | undefined {
    return this.session?.instance;
  }

  /** The hub this player last stood in, to return to after a dungeon (a cluster's). */
  get homeHubId(): string | undefined {
    return this.session?.homeHubId;
  }

  set homeHubId(id: string | undefined) {
    if (this.session) this.session.homeHubId = id;
  }

  /** The run on another process whose crew record may yet reach this player (a cluster's). */
  get pendingCrew(): { readonly id: string; readonly seen: boolean } | undefined {
    return this.session?.pendingCrew;
  }

  set pendingCrew(crew: { readonly id: string; readonly seen: boolean } | undefined) {
    if (this.session) this.session.pendingCrew = crew;
  }

  /** Bytes waiting to leave for this client. */
  get queuedBytes(): number {
    return this.#transport.bufferedBytes;
  }

  /**
   * Enters sent on this connection: datagram snapshots carry it (mod 256) so none is
   * applied to the wrong world (the client counts the Enters it read since its hello).
   */
  get epoch(): number {
    return this.#sentByKind[ServerKind.Enter];
  }

  /** Messages of `kind` sent on the ordered channel so far. */
  sent(kind: ServerKind): number {
    return this.#sentByKind[kind] ?? 0;
  }

  /** The transport carrying this connection. */
  get transportKind(): TransportKind {
    return this.#transport.kind;
  }

  /** True when snapshots go as datagrams (they may be lost: deltas need an acknowledged base). */
  get datagrams(): boolean {
    return this.#transport.datagrams;
  }

  /** True once after the client asked for a snapshot against its `snapshotAck`. */
  consumeResync(): boolean {
    const r = this.#resync;
    this.#resync = false;
    return r;
  }

  sendReliable(data: Uint8Array): void {
    if (this.state === "closed") return;
    this.#sending = true;
    // Every message is a CBOR array of fewer than 24 items: its kind is the second byte.
    this.#sentByKind[data[1]]++;
    // A new world: acknowledgements of the old one's snapshots name no baseline here.
    if (data[1] === ServerKind.Enter) {
      this.snapshotAck = -1;
      this.#loss.entered();
    }
    this.bytesOut += data.byteLength;
    this.#server.counters.bytesOut += data.byteLength;
    this.#transport.sendReliable(data);
    // A client that stops reading must not grow the server: the reliable stream has no
    // other bound. The Reject that follows will not reach it either; the close frees it.
    const queued = this.#transport.bufferedBytes;
    if (queued > this.#server.limits.maxQueuedBytes) {
      this.close(CloseCode.Backlogged, `not reading: ${queued} bytes queued`);
    }
  }

  /** Newest wins; `tick` names a snapshot (a datagram link watches its acknowledgements). */
  sendLatest(data: Uint8Array, tick?: number): boolean {
    if (this.state === "closed") return false;
    const watched = this.datagrams && tick !== undefined;
    // The clock is read only where it is used: every client's snapshot passes here.
    const now = watched ? this.#server.clock.now() : 0;
    if (watched) this.#transport.setLatestCopies?.(this.#loss.lossy(now) ? 2 : 1);
    if (!this.#transport.sendLatest(data)) {
      this.#server.counters.snapshotsSkipped++;
      return false;
    }
    // Only a snapshot that left can be missed: a skipped one is not the link's loss.
    if (watched) this.#loss.sent(tick, now);
    this.#sending = true;
    this.bytesOut += data.byteLength;
    this.#server.counters.bytesOut += data.byteLength;
    return true;
  }

  /** Sends what this tick queued, as one frame, with the pong if one is due. */
  flush(): void {
    if (this.state === "closed") return;
    const pong = this.#pong;
    // Every client passes here every tick: the clock is read only when a pong waits.
    const now = pong ? this.#server.clock.now() : 0;
    if (pong && (this.#sending || now - pong.atMs >= PONG_MAX_HOLD_MS)) {
      this.#pong = undefined;
      this.sendReliable(encodeServerMessage(this.#server.encoder, {
        kind: ServerKind.Pong,
        clientTimeMs: pong.clientTimeMs,
        tick: this.instance?.world.tick ?? 0,
        heldMs: Math.min(0xffff, Math.round(now - pong.atMs)),
      }));
      // The pong may have overflowed the queue and closed us.
      if ((this.state as ConnectionState) === "closed") return;
    }
    this.#sending = false;
    this.#transport.flush();
  }

  /**
   * Handles one frame from the ordered stream: one or more messages. Never throws: bad
   * input closes this connection only.
   */
  receive(data: Uint8Array | string): void {
    if (this.state === "closed") return;
    const server = this.#server;
    const size = typeof data === "string" ? data.length : data.byteLength;
    // Size first: one huge frame is "too large", whatever it does to the byte budget.
    // A hello may carry a transfer ticket; every later frame is small.
    const cap = this.state === "handshake"
      ? server.limits.maxHelloBytes
      : server.limits.maxClientFrameBytes;
    if (!this.#admit(size, cap)) return;
    if (typeof data === "string") {
      this.close(CloseCode.BadMessage, "text frames are not accepted");
      return;
    }
    let parts: Uint8Array[] | undefined;
    try {
      // Nearly every frame is one message (an input batch): read as it is, no parts made.
      if (!isOneMessage(data)) {
        parts = splitFrame(data, { maxMessages: MAX_CLIENT_MESSAGES_PER_FRAME });
      }
    } catch (err) {
      this.close(CloseCode.BadMessage, err instanceof CodecError ? err.message : "bad frame");
      return;
    }
    if (!parts) {
      this.#receiveMessage(data);
      return;
    }
    // Each message past the first counts against the message budget too.
    if (parts.length > 1 && !this.#messages.take(parts.length - 1, server.clock.now())) {
      this.close(CloseCode.RateLimited, "sending too fast");
      return;
    }
    for (const part of parts) {
      // A message may have closed us (a bad one, or a Reject): ignore the rest of the frame.
      if (!this.#receiveMessage(part)) return;
    }
  }

  /** Handles one datagram: a single Input message, nothing else. Never throws. */
  receiveDatagram(data: Uint8Array): void {
    if (this.state === "closed") return;
    if (!this.#admit(data.byteLength, this.#server.limits.maxClientFrameBytes)) return;
    this.#receiveMessage(data, { datagram: true });
  }

  /** Counts a frame against the size cap and the budgets; closes and returns false when over. */
  #admit(size: number, cap: number): boolean {
    const server = this.#server;
    this.bytesIn += size;
    server.counters.bytesIn += size;
    server.counters.messagesIn++;
    const now = server.clock.now();
    this.lastMessageAtMs = now;
    if (size > cap) {
      this.close(CloseCode.FrameTooLarge, `frame of ${size} bytes exceeds ${cap}`);
      return false;
    }
    if (!this.#messages.take(1, now) || !this.#bytes.take(size, now)) {
      this.close(CloseCode.RateLimited, "sending too fast");
      return false;
    }
    return true;
  }

  /** Decodes and handles one message; false once the connection is closed. */
  #receiveMessage(data: Uint8Array, opts: { datagram?: boolean } = {}): boolean {
    const server = this.#server;
    let msg: ClientMessage;
    try {
      msg = decodeClientMessage(this.#decoder, data);
    } catch (err) {
      const reason = err instanceof CodecError ? err.message : "malformed message";
      this.close(CloseCode.BadMessage, reason);
      return false;
    }
    if (opts.datagram && msg.kind !== ClientKind.Input) {
      this.close(CloseCode.BadMessage, "only input may come as a datagram");
      return false;
    }
    this.session?.heard();
    try {
      this.#handle(msg);
    } catch (err) {
      // A bug must not take the process down; this client alone pays for it.
      server.log("handler_error", { conn: this.id, error: errorText(err) });
      this.close(CloseCode.ServerError, "the server could not handle a message");
    }
    return (this.state as ConnectionState) !== "closed";
  }

  #handle(msg: ClientMessage): void {
    const server = this.#server;
    if (this.state === "handshake") {
      if (this.hello) {
        // Said hello, and the cluster is still finding where its resume lives: a second
        // hello is a bad client; anything else (a ping) waits for nothing and is dropped.
        if (msg.kind === ClientKind.Hello) this.close(CloseCode.BadMessage, "duplicate hello");
        return;
      }
      if (msg.kind !== ClientKind.Hello) {
        this.close(CloseCode.BadMessage, "expected hello first");
        return;
      }
      if (msg.version !== PROTOCOL_VERSION) {
        this.close(
          CloseCode.VersionMismatch,
          `protocol version ${msg.version} is not supported; this server speaks ${PROTOCOL_VERSION} — reload the page`,
        );
        return;
      }
      if (msg.content !== CONTENT_HASH) {
        // Worlds, bosses and kinds travel as ids: other content would misread every one.
        this.close(
          CloseCode.VersionMismatch,
          `content ${hex(msg.content)} is not this server's ${hex(CONTENT_HASH)} — reload the page`,
        );
        return;
      }
      const named = checkName(msg.name, server.limits.maxNameLength);
      if (!named.ok) {
        this.close(CloseCode.BadName, named.reason);
        return;
      }
      this.#clearHandshakeTimer();
      this.hello = {
        name: named.name,
        nameKey: named.key,
        ticket: msg.ticket,
        resume: msg.resume ?? undefined,
      };
      server.admit(this);
      return;
    }
    const session = this.session;
    if (!session) return;
    switch (msg.kind) {
      case ClientKind.Hello:
        this.close(CloseCode.BadMessage, "duplicate hello");
        return;
      case ClientKind.Input: {
        if (this.datagrams) {
          // Datagrams may come out of order: any acknowledged snapshot is a fine baseline.
          this.snapshotAck = msg.snapshotAck ?? -1;
          if (msg.snapshotAck !== undefined) {
            this.#loss.acked(msg.snapshotAck, msg.snapshotsHeld ?? 0, server.clock.now());
          }
        } else if (msg.snapshotAck !== undefined) {
          // On the stream an ack asks for a baseline the client holds (it lost one).
          this.snapshotAck = msg.snapshotAck;
          this.#resync = true;
        }
        const instance = session.instance;
        if (!instance) return;
        for (const frame of msg.frames) {
          server.counters.inputVerdicts[instance.offerInput(session.playerId, frame)]++;
        }
        return;
      }
      case ClientKind.Ping:
        // Held for the next frame that goes anyway (one per snapshot interval); a newer
        // ping replaces an unanswered one, so a flood of pings earns one pong a frame.
        this.#pong = { clientTimeMs: msg.clientTimeMs, atMs: server.clock.now() };
        return;
      case ClientKind.Choice:
        server.choose(session, msg.choice);
        return;
    }
  }

  #clearHandshakeTimer(): void {
    if (this.#handshakeTimer !== undefined) this.#server.clock.clearTimer(this.#handshakeTimer);
    this.#handshakeTimer = undefined;
  }

  /**
   * Says why in a Reject message, closes the socket with the same code and reason, and
   * lets the server release the player. Idempotent. The Reject matters: Deno drops a
   * server socket that receives data after close(), losing the close frame (a flooding
   * client never sees it), but what was sent before the close still arrives.
   */
  close(code: number, reason: string): void {
    if (this.state === "closed") return;
    // Closed first, so that a Reject that overflows the queue cannot close it again.
    this.state = "closed";
    const reject = encodeServerMessage(this.#server.encoder, {
      kind: ServerKind.Reject,
      code,
      reason,
    });
    this.bytesOut += reject.byteLength;
    this.#server.counters.bytesOut += reject.byteLength;
    this.#transport.sendReliable(reject);
    this.#transport.close(code, reason); // it flushes first: the Reject leaves before the close
    this.#release({ code: String(code), reason, byServer: true });
  }

  /** Ends the connection after a Transfer: no Reject, the client is on its way elsewhere. */
  endAfterTransfer(): void {
    if (this.state === "closed") return;
    this.state = "closed";
    this.#transport.close(CloseCode.Transferred, "continued on another process");
    this.#release({ code: String(CloseCode.Transferred), reason: "transferred", byServer: true });
  }

  /** The socket is gone (closed by the peer, or failed): release everything. */
  closed(code = "peer", reason = "closed by client"): void {
    if (this.state === "closed") return;
    this.state = "closed";
    this.#release({ code, reason, byServer: false });
  }

  #release(why: { code: string; reason: string; byServer: boolean }): void {
    this.#clearHandshakeTimer();
    this.#server.forget(this, why);
  }
}

/** A content hash as 8 hex digits. */
function hex(hash: number): string {
  return hash.toString(16).padStart(8, "0");
}

/** An error's stack (or text) for a log line. */
export function errorText(err: unknown): string {
  return err instanceof Error ? (err.stack ?? `${err.name}: ${err.message}`) : String(err);
}
