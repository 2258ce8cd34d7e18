/**
 * A WebSocket client that lost a snapshot (a simulated link dropped it) asks for one
 * against a snapshot it holds: the server, which keeps only the newest it sent on an
 * ordered stream, answers with a whole snapshot, never with a delta against the one
 * that was lost; the client is back in step and deltas resume against what it holds.
 */
import assert from "node:assert/strict";
import { FOLD, worldByKey } from "../../../content/mod.ts";
import { Instance, type Peer } from "../../../net/server/instance.ts";
import { decodeServerMessage, MessageDecoder, MessageEncoder } from "../../../net/wire/codec.ts";
import { EnterReason, ServerKind, type SnapshotWireMsg } from "../../../net/wire/protocol.ts";
import {
  decodeSnapshotBody,
  SnapshotHistory,
  type SnapshotUnits,
} from "../../../net/wire/snapshot_delta.ts";
import { SNAPSHOT_BASELINES } from "../../../content/net_tuning.ts";

const decoder = new MessageDecoder();

/** A peer on an ordered stream that can be told to ask for a resync. */
function streamPeer(playerId: number, name: string) {
  const snapshots: SnapshotWireMsg[] = [];
  const peer: Peer & { snapshotAck?: number; resync: boolean } = {
    playerId,
    name,
    resync: false,
    consumeResync() {
      const r = this.resync;
      this.resync = false;
      return r;
    },
    sendReliable: () => {},
    sendLatest: (data) => {
      const m = decodeServerMessage(decoder, data);
      if (m.kind === ServerKind.Snapshot) snapshots.push(m);
      return true;
    },
  };
  return { peer, snapshots };
}

/** Rebuilds `m` as a client holding `held` would; throws if it names a baseline not held. */
function rebuild(held: SnapshotHistory, m: SnapshotWireMsg): SnapshotUnits {
  const base = m.baseTick === undefined ? undefined : held.get(m.baseTick);
  if (m.baseTick !== undefined && !base) throw new Error(`no baseline ${m.baseTick}`);
  const units = decodeSnapshotBody(m.body, { tick: m.tick, base });
  held.add(units);
  return units;
}

Deno.test("a stream client that lost a snapshot gets a whole one, then deltas again", () => {
  const { world, id: worldId } = worldByKey(FOLD.key);
  const instance = new Instance("dungeon-1", {
    worldId,
    def: world,
    seed: 3,
    encoder: new MessageEncoder(),
  });
  const ann = streamPeer(1, "Ann");
  const bo = streamPeer(2, "Bo");
  instance.join(ann.peer, EnterReason.Portal);
  instance.join(bo.peer, EnterReason.Portal);
  const step = (n: number) => {
    for (let i = 0; i < n; i++) instance.step();
  };
  step(30);
  const annHeld = new SnapshotHistory(SNAPSHOT_BASELINES);
  const boHeld = new SnapshotHistory(SNAPSHOT_BASELINES);
  for (const m of ann.snapshots) rebuild(annHeld, m);
  for (const m of bo.snapshots) rebuild(boHeld, m);
  assert.ok(ann.snapshots.length >= 9);
  assert.ok(ann.snapshots.slice(1).every((m) => m.baseTick !== undefined), "deltas meanwhile");

  // The next snapshot to Ann is lost on the way; she asks for one against her newest.
  const sentBefore = ann.snapshots.length;
  step(3);
  assert.equal(ann.snapshots.length, sentBefore + 1);
  const lost = ann.snapshots.pop()!;
  ann.peer.snapshotAck = annHeld.newest!.tick;
  ann.peer.resync = true;
  rebuild(boHeld, bo.snapshots.at(-1)!); // Bo lost nothing

  step(3);
  const answer = ann.snapshots.at(-1)!;
  assert.ok(answer.tick > lost.tick);
  assert.notEqual(answer.baseTick, lost.tick, "never a delta against the lost one");
  assert.equal(answer.baseTick, undefined, "a whole snapshot: only the newest sent is kept");
  const rebuilt = rebuild(annHeld, answer);
  const boSame = rebuild(boHeld, bo.snapshots.at(-1)!);
  assert.equal(boSame.tick, rebuilt.tick);
  assert.deepEqual(rebuilt, boSame, "Ann sees what Bo, who lost nothing, sees");

  step(3);
  const next = ann.snapshots.at(-1)!;
  assert.equal(next.baseTick, answer.tick, "deltas resume against the whole one");
  rebuild(annHeld, next);
});
