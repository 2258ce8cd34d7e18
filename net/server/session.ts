/**
 * A player: the id, the name and the instance its ship is in, from an accepted
 * hello until the player leaves. The socket that carries it (a Connection) may
 * come and go underneath; instances see only this Peer.
 */
import type { Connection } from "./connection.ts";
import type { Instance, Peer } from "./instance.ts";

/** One player, connected or not. */
export class Session implements Peer {
  readonly playerId: number;
  readonly name: string;
  /** The key no other player's name may share (net/server/names.ts). */
  readonly nameKey: string;
  /** Random, unguessable: the resume token names the session by it. */
  readonly sid: string;
  /** The generation of resume token that takes this session back; each resume moves it on. */
  gen = 0;
  /**
   * The previous generation still works until the connection that used it says a word:
   * a resume whose Welcome was lost on the way must not lock its player out.
   */
  previousGenLive = false;
  /** When the current token expires (a fresh one goes out at half its life). */
  tokenExpiresAtMs = 0;
  tokenIssuedAtMs = 0;
  /** The timer ending the session if nobody resumes it (set while its link is down). */
  graceTimer: number | undefined;
  /** When the link went down (while detached). */
  detachedAtMs = 0;
  /** Where the ship is. */
  instance: Instance | undefined;
  /** The socket carrying it now, if any. */
  conn: Connection | undefined;
  /** The hub this player last stood in, to return to after a dungeon (a cluster's). */
  homeHubId: string | undefined;
  /**
   * The run on another process this player left for a hub here (a cluster's): its crew
   * record may yet bring them the results (unless `seen` already) and the offer of "again".
   */
  pendingCrew: { readonly id: string; readonly seen: boolean } | undefined;

  constructor(opts: { playerId: number; name: string; nameKey: string; sid: string }) {
    this.playerId = opts.playerId;
    this.name = opts.name;
    this.nameKey = opts.nameKey;
    this.sid = opts.sid;
  }

  /** Its connection said something after its Welcome: the previous token is spent now. */
  heard(): void {
    this.previousGenLive = false;
  }

  sendReliable(data: Uint8Array): void {
    this.conn?.sendReliable(data);
  }

  sendLatest(data: Uint8Array, tick?: number): boolean {
    return this.conn?.sendLatest(data, tick) ?? false;
  }

  /** Its connection sends snapshots as datagrams. */
  get datagrams(): boolean {
    return this.conn?.datagrams ?? false;
  }

  /** Enters its connection has carried (datagram snapshots name it, mod 256). */
  get epoch(): number {
    return this.conn?.epoch ?? 0;
  }

  /** The snapshot tick its client says it holds (-1: none). */
  get snapshotAck(): number {
    return this.conn?.snapshotAck ?? -1;
  }

  consumeResync(): boolean {
    return this.conn?.consumeResync() ?? false;
  }
}
