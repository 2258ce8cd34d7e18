/**
 * A lean load-test bot: a real WebSocket speaking the real protocol through the real
 * codec (hello, batched input frames leading the server's tick, snapshot deltas against
 * its baselines), but no prediction, no bullet replica and no events decoded, so one
 * core drives the 800 players the load test needs (full ClientRuntimes manage about a
 * hundred there). What the server spends on it is what it spends on a browser: the
 * same messages in, the same frames out. tools/loadtest_bots.ts runs them with `lean`.
 */
import { splitFrame } from "../net/wire/frames.ts";
import {
  decodeServerMessage,
  encodeClientMessage,
  MessageDecoder,
  MessageEncoder,
} from "../net/wire/codec.ts";
import { ClientKind, PROTOCOL_VERSION, ServerKind } from "../net/wire/protocol.ts";
import { decodeSnapshotBody, SnapshotHistory } from "../net/wire/snapshot_delta.ts";
import { INPUT_SENDING, SNAPSHOT_BASELINES } from "../content/net_tuning.ts";
import { CONTENT, CONTENT_HASH } from "../content/mod.ts";
import { type InputFrame, POS_UNITS_PER_PX, TICK_MS } from "../sim/mod.ts";

/** How many ticks ahead of the server's a bot's frames are stamped (a loopback lead). */
const LEAD_TICKS = INPUT_SENDING.reliable.batchTicks + 3;

/** Where a lean bot stands. */
export type LeanPhase = "connecting" | "hub" | "dungeon" | "boss" | "closed";

/** What a bot wants to do this tick, given where its ship is. */
export type Steer = (
  view: {
    kind: "hub" | "dungeon";
    worldId: number;
    x: number;
    y: number;
    boss: boolean;
    tick: number;
  },
) => Omit<InputFrame, "tick">;

/** One lean bot on one WebSocket. */
export class LeanBot {
  readonly #socket: WebSocket;
  readonly #decoder = new MessageDecoder();
  readonly #encoder = new MessageEncoder();
  readonly #held = new SnapshotHistory(SNAPSHOT_BASELINES);
  readonly #steer: Steer;
  readonly #frames: InputFrame[] = [];
  #playerId = 0;
  #worldId = -1;
  #kind: "hub" | "dungeon" = "hub";
  #boss = false;
  #self: { x: number; y: number } | undefined;
  /** The server's tick as of the newest snapshot, and when it arrived. */
  #serverTick = -1;
  #serverTickAtMs = 0;
  #nextFrameTick = -1;
  #closed = false;
  /** Settles when the socket has closed. */
  readonly closed: Promise<void>;
  snapshots = 0;
  /** Deltas that named a baseline this bot did not hold (it then asked for one it does). */
  withoutBaseline = 0;
  bytesIn = 0;
  /** Why the socket closed ("code reason"), once it has. */
  closeReason: string | undefined;
  /** The first message this bot could not read (a bug in it, or in the server). */
  error: string | undefined;
  /** A delta named a baseline this bot does not hold: the next input asks for one it does. */
  #needBaseline = false;

  constructor(url: string, opts: { name: string; steer: Steer }) {
    this.#steer = opts.steer;
    const socket = new WebSocket(url);
    socket.binaryType = "arraybuffer";
    socket.onopen = () =>
      socket.send(encodeClientMessage(this.#encoder, {
        kind: ClientKind.Hello,
        version: PROTOCOL_VERSION,
        name: opts.name,
        content: CONTENT_HASH,
      }));
    socket.onmessage = (e) => this.#receive(new Uint8Array(e.data as ArrayBuffer));
    this.closed = new Promise((resolve) => {
      socket.onclose = (e) => {
        this.#closed = true;
        this.closeReason = `${e.code} ${e.reason}`;
        resolve();
      };
    });
    this.#socket = socket;
  }

  get phase(): LeanPhase {
    if (this.#closed) return "closed";
    if (this.#worldId < 0 || this.#serverTick < 0) return "connecting";
    return this.#kind === "hub" ? "hub" : this.#boss ? "boss" : "dungeon";
  }

  /** Sends the frames due by `nowMs`: a message per full batch, as the browser does. */
  update(nowMs: number): void {
    if (this.#closed || this.#serverTick < 0 || !this.#self) return;
    const serverNow = this.#serverTick + Math.floor((nowMs - this.#serverTickAtMs) / TICK_MS);
    if (this.#nextFrameTick < serverNow) {
      this.#nextFrameTick = serverNow + LEAD_TICKS; // first frames, or fell behind: start ahead
      this.#frames.length = 0;
    }
    const batch = INPUT_SENDING.reliable.batchTicks;
    while (this.#nextFrameTick <= serverNow + LEAD_TICKS) {
      const tick = this.#nextFrameTick++;
      this.#frames.push({
        tick,
        ...this.#steer({
          kind: this.#kind,
          worldId: this.#worldId,
          x: this.#self.x,
          y: this.#self.y,
          boss: this.#boss,
          tick,
        }),
      });
      if (this.#frames.length < batch) continue;
      if (this.#socket.readyState === WebSocket.OPEN) {
        // As the browser's runtime: an ack asks for a delta of a baseline held (or whole).
        const snapshotAck = this.#needBaseline ? (this.#held.newest?.tick ?? 0) : undefined;
        this.#needBaseline = false;
        this.#socket.send(
          encodeClientMessage(this.#encoder, {
            kind: ClientKind.Input,
            frames: this.#frames,
            snapshotAck,
          }),
        );
      }
      this.#frames.length = 0;
    }
  }

  close(): void {
    try {
      this.#socket.close(1000, "load test over");
    } catch {
      // not open yet
    }
  }

  #receive(frame: Uint8Array): void {
    try {
      this.#read(frame);
    } catch (err) {
      this.error ??= (err as Error).message;
    }
  }

  #read(frame: Uint8Array): void {
    this.bytesIn += frame.byteLength;
    for (const part of splitFrame(frame, { maxMessages: 64 })) {
      // Every message is a CBOR array: its kind is the second byte. Events are not read.
      const kind = part[1];
      if (kind === ServerKind.Events || kind === ServerKind.Pong) continue;
      const msg = decodeServerMessage(this.#decoder, part);
      if (msg.kind === ServerKind.Welcome) this.#playerId = msg.playerId;
      if (msg.kind === ServerKind.Enter) {
        this.#held.clear();
        this.#worldId = msg.worldId;
        this.#kind = CONTENT.worlds[msg.worldId].kind;
        this.#boss = false;
        this.#self = undefined;
        // Each world counts its own ticks (a new dungeon starts at 0): frames start afresh
        // from its first snapshot, or they would be stamped far in its future and dropped.
        this.#serverTick = -1;
        this.#nextFrameTick = -1;
        this.#frames.length = 0;
      }
      if (msg.kind === ServerKind.Snapshot) {
        const base = msg.baseTick === undefined ? undefined : this.#held.get(msg.baseTick);
        if (msg.baseTick !== undefined && !base) {
          this.withoutBaseline++;
          this.#needBaseline = true;
          continue;
        }
        const units = decodeSnapshotBody(msg.body, { tick: msg.tick, base });
        this.#held.add(units);
        this.snapshots++;
        this.#serverTick = msg.tick;
        this.#serverTickAtMs = performance.now();
        this.#boss = units.boss !== null;
        const me = units.players.find((r) => r[0] === this.#playerId);
        // Rows are in wire units.
        if (me) this.#self = { x: me[1] / POS_UNITS_PER_PX, y: me[2] / POS_UNITS_PER_PX };
      }
    }
  }
}
