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
  /** Where the ship is. */
  instance: Instance | undefined;
  /** The socket carrying it now, if any. */
  conn: Connection | undefined;
  /** The hub this player last stood in, to return to after a dungeon (a cluster's). */
  homeHubId: string | undefined;

  constructor(opts: { playerId: number; name: string; nameKey: string }) {
    this.playerId = opts.playerId;
    this.name = opts.name;
    this.nameKey = opts.nameKey;
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
