/**
 * The structural guarantee: no client message can say where a ship is, what it
 * hit, what damage it took, that it died or that an escape finished. This test
 * enumerates every client kind and every field a decoded client message carries;
 * adding a field or a kind makes it fail until the list below is reviewed.
 */
import assert from "node:assert/strict";
import {
  decodeClientMessage,
  encodeClientMessage,
  MessageDecoder,
  MessageEncoder,
} from "../../../net/wire/codec.ts";
import {
  Choice,
  ClientKind,
  type ClientMessage,
  PROTOCOL_VERSION,
  ServerKind,
} from "../../../net/wire/protocol.ts";
import { Button, BUTTON_MASK } from "../../../sim/mod.ts";

/** Every field a client may send, per kind, and every field of an input frame. */
const ALLOWED = {
  Hello: ["kind", "version", "name", "content", "resume"],
  // Which snapshots arrived (datagrams): a receipt, the baseline of the next delta.
  Input: ["kind", "frames", "snapshotAck", "snapshotsHeld"],
  Ping: ["kind", "clientTimeMs"],
  Choice: ["kind", "choice"],
} as const;
// viewLag says how old the client's picture of the enemies was: a time, not an outcome.
// The server honours it only within its rewind limit (docs/NETCODE.md "Timelines").
const FRAME_FIELDS = ["tick", "moveX", "moveY", "aim", "buttons", "viewLag"];
const FORBIDDEN =
  /^(x|y|pos|position|hit|hits|damage|hp|health|dead|died|death|escaped|escape|kill)/i;

const samples: Record<keyof typeof ClientKind, ClientMessage> = {
  Hello: {
    kind: ClientKind.Hello,
    version: PROTOCOL_VERSION,
    name: "Ada",
    content: 7,
    resume: "t",
  },
  Input: {
    kind: ClientKind.Input,
    frames: [{ tick: 9, moveX: 100, moveY: -100, aim: 1, buttons: BUTTON_MASK }],
    snapshotAck: 6,
    snapshotsHeld: 3,
  },
  Ping: { kind: ClientKind.Ping, clientTimeMs: 5 },
  Choice: { kind: ClientKind.Choice, choice: Choice.Again },
};

Deno.test("client messages carry only intent: the reviewed fields and nothing else", () => {
  assert.deepEqual(Object.keys(ClientKind).sort(), Object.keys(ALLOWED).sort());
  const enc = new MessageEncoder();
  for (const [name, sample] of Object.entries(samples) as [keyof typeof ALLOWED, ClientMessage][]) {
    const back = decodeClientMessage(new MessageDecoder(), encodeClientMessage(enc, sample));
    assert.deepEqual(Object.keys(back).sort(), [...ALLOWED[name]].sort(), name);
    for (const field of ALLOWED[name]) {
      if (field === "kind") continue;
      assert.doesNotMatch(field, FORBIDDEN, `${name}.${field} could express an outcome`);
    }
    if (back.kind === ClientKind.Input) {
      for (const f of back.frames) {
        assert.deepEqual(Object.keys(f).sort(), [...FRAME_FIELDS].sort());
      }
    }
  }
  for (const f of FRAME_FIELDS) assert.doesNotMatch(f, FORBIDDEN);
});

Deno.test("a button can only ask: fire, escape (start a channel) and focus (move slower)", () => {
  assert.deepEqual(Object.keys(Button).sort(), ["Escape", "Fire", "Focus"]);
  assert.equal(BUTTON_MASK, 0b111);
});

Deno.test("client and server kinds never share a number", () => {
  const client = new Set<number>(Object.values(ClientKind));
  for (const k of Object.values(ServerKind)) assert.ok(!client.has(k), `kind ${k} is in both`);
});
