/**
 * One client socket from open to close: the per-connection audit (frame size, rate
 * and byte budgets, decoding, the handshake and idle timers, the cap on bytes
 * queued to a client that stops reading) and the hand-off of what it says to the
 * server. Bad input closes this connection only, with a Reject saying why.
 * The player behind it is a Session (net/server/session.ts), which outlives it.
 */
import { CONTENT_HASH } from "../../content/mod.ts";
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
  PROTOCOL_VERSION,
  ServerKind,
} from "../wire/protocol.ts";
import { Budget } from "./admission.ts";
import type { Instance } from "./instance.ts";
import { checkName } from "./names.ts";
import type { GameServer } from "./server.ts";
import type { Session } from "./session.ts";
import type { Transport } from "./transport.ts";

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
  readonly #decoder = new MessageDecoder();
  readonly #messages: Budget;
  readonly #bytes: Budget;
  #handshakeTimer: number | undefined;
  state: ConnectionState = "handshake";
  /** What its hello said, once valid. */
  hello: HelloInfo | undefined;
  /** The player this socket carries, once welcomed. */
  session: Session | undefined;
  /** When the last message arrived (the idle timeout counts from it). */
  lastMessageAtMs: number;
  bytesIn = 0;
  bytesOut = 0;

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

  /** Bytes waiting to leave for this client. */
  get queuedBytes(): number {
    return this.#transport.bufferedBytes;
  }

  sendReliable(data: Uint8Array): void {
    if (this.state === "closed") return;
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

  sendLatest(data: Uint8Array): boolean {
    if (this.state === "closed") return false;
    if (!this.#transport.sendLatest(data)) {
      this.#server.counters.snapshotsSkipped++;
      return false;
    }
    this.bytesOut += data.byteLength;
    this.#server.counters.bytesOut += data.byteLength;
    return true;
  }

  /** Handles one incoming frame. Never throws: bad input closes this connection only. */
  receive(data: Uint8Array | string): void {
    if (this.state === "closed") return;
    const server = this.#server;
    const size = typeof data === "string" ? data.length : data.byteLength;
    this.bytesIn += size;
    server.counters.bytesIn += size;
    server.counters.messagesIn++;
    const now = server.clock.now();
    this.lastMessageAtMs = now;
    // Size first: one huge frame is "too large", whatever it does to the byte budget.
    // A hello may carry a transfer ticket; every later frame is small.
    const cap = this.state === "handshake"
      ? server.limits.maxHelloBytes
      : server.limits.maxClientFrameBytes;
    if (size > cap) {
      this.close(CloseCode.FrameTooLarge, `frame of ${size} bytes exceeds ${cap}`);
      return;
    }
    if (!this.#messages.take(1, now) || !this.#bytes.take(size, now)) {
      this.close(CloseCode.RateLimited, "sending too fast");
      return;
    }
    if (typeof data === "string") {
      this.close(CloseCode.BadMessage, "text frames are not accepted");
      return;
    }
    let msg: ClientMessage;
    try {
      msg = decodeClientMessage(this.#decoder, data);
    } catch (err) {
      const reason = err instanceof CodecError ? err.message : "malformed message";
      this.close(CloseCode.BadMessage, reason);
      return;
    }
    try {
      this.#handle(msg);
    } catch (err) {
      // A bug must not take the process down; this client alone pays for it.
      server.log("handler_error", { conn: this.id, error: errorText(err) });
      this.close(CloseCode.ServerError, "the server could not handle a message");
    }
  }

  #handle(msg: ClientMessage): void {
    const server = this.#server;
    if (this.state === "handshake") {
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
        const instance = session.instance;
        if (!instance) return;
        for (const frame of msg.frames) {
          server.counters.inputVerdicts[instance.offerInput(session.playerId, frame)]++;
        }
        return;
      }
      case ClientKind.Ping:
        this.sendReliable(encodeServerMessage(server.encoder, {
          kind: ServerKind.Pong,
          clientTimeMs: msg.clientTimeMs,
          tick: session.instance?.world.tick ?? 0,
        }));
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
    this.#transport.close(code, reason);
    this.#release(String(code), reason);
  }

  /** Ends the connection after a Transfer: no Reject, the client is on its way elsewhere. */
  endAfterTransfer(): void {
    if (this.state === "closed") return;
    this.state = "closed";
    this.#transport.close(CloseCode.Transferred, "continued on another process");
    this.#release(String(CloseCode.Transferred), "transferred");
  }

  /** The socket is gone (closed by the peer, or failed): release everything. */
  closed(code = "peer", reason = "closed by client"): void {
    if (this.state === "closed") return;
    this.state = "closed";
    this.#release(code, reason);
  }

  #release(code: string, reason: string): void {
    this.#clearHandshakeTimer();
    this.#server.forget(this, { code, reason });
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
