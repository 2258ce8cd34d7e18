/**
 * Session resume, in process on a ManualClock: a player whose link drops mid-boss
 * comes back over a new connection with its token and lands in the same instance
 * with the same id, ship and HP, and every live bullet; the ship waited parked
 * (not hit, not aimed at); the old socket, if the server had not noticed it die,
 * is closed with 4010. Reused, forged and expired tokens are refused (the player
 * starts afresh in the hub, told why), and so is any token once the grace is over.
 */
import assert from "node:assert/strict";
import { AWAY_AFTER_SILENT_TICKS, LIMITS } from "../../../content/net_tuning.ts";
import { CloseCode, EnterReason, NoticeCode, ServerKind } from "../../../net/wire/protocol.ts";
import { TokenSigner } from "../../../net/server/tokens.ts";
import type { WorldDef } from "../../../sim/mod.ts";
import type { ServerLimits } from "../../../net/server/server.ts";
import { NetHarness, type SimClient, toPortal } from "../_harness.ts";

/** Dungeons open on their boss at once. */
const bossRush = (kind: "hub" | "dungeon", _id: string, world: WorldDef) =>
  kind === "dungeon" ? { ...world, waves: [], waveDelayTicks: 1 } : world;

/** A harness whose dungeons open on the boss, and one player walked into one. */
function inBossFight(limits: Partial<ServerLimits> = {}) {
  const h = new NetHarness({ worldDef: bossRush, limits });
  const c = h.connect("Ada", { control: toPortal });
  h.runUntil(() => c.runtime.world?.kind === "dungeon" && c.runtime.boss() !== null, {
    maxMs: 8000,
    what: "Ada in a boss fight",
  });
  c.control = () => ({ moveX: 0, moveY: 0, aim: 0, buttons: 0 });
  return { h, c };
}

/** The server's copy of the player's ship. */
function ship(h: NetHarness, c: SimClient) {
  const instance = h.server.instances.get(c.runtime.instanceId);
  assert.ok(instance, `instance ${c.runtime.instanceId} exists`);
  const p = instance.world.players.get(c.runtime.playerId);
  assert.ok(p, "the ship is in it");
  return p;
}

/** Kinds of the messages a transport carried. */
function kinds(t: SimClient["transport"]): number[] {
  return t.messages().map((m) => m.kind);
}

function notices(c: SimClient) {
  return c.transport.messages().filter((m) => m.kind === ServerKind.Notice);
}

Deno.test("a link that dies mid-boss and comes back within 5 s resumes the same instance and ship", () => {
  const { h, c } = inBossFight();
  using _h = h;
  h.pump(1500); // the fight is on: bullets in the air
  const before = {
    playerId: c.runtime.playerId,
    instanceId: c.runtime.instanceId,
    hp: ship(h, c).hp,
    x: ship(h, c).x,
    y: ship(h, c).y,
    bullets: h.server.instances.get(c.runtime.instanceId)!.world.bullets.count,
  };
  assert.ok(before.bullets > 0, "live bullets to carry over");
  const token = c.runtime.resumeToken;
  assert.ok(token, "the Welcome carried a resume token");

  // The link dies; the server does not notice (a half-open socket). 3 s later, a new one.
  c.link.kill();
  c.runtime.reconnecting();
  h.pump(3000);
  assert.equal(ship(h, c).away, true, "parked: a silent player in a dungeon after 0.5 s");
  const old = h.reconnect(c);
  h.runUntil(() => c.enters.at(-1)?.value.reason === EnterReason.Resume, {
    maxMs: 1000,
    what: "the Enter of a resume",
  });
  assert.equal(c.runtime.phase, "playing");
  assert.equal(c.runtime.playerId, before.playerId, "the same player id");
  assert.equal(c.runtime.instanceId, before.instanceId, "the same instance");
  assert.equal(old.transport.closedWith?.code, CloseCode.Replaced, "the old socket got 4010");
  assert.match(old.transport.closedWith!.reason, /continued on a newer connection/);
  const enter = c.enters.at(-1)!.value;
  assert.equal(enter.instanceId, before.instanceId);
  assert.ok(enter.bullets.length > 0, "every live bullet came with the Enter");
  const welcome = c.transport.messages().find((m) => m.kind === ServerKind.Welcome);
  assert.ok(welcome?.kind === ServerKind.Welcome && welcome.resume !== token, "a fresh token");
  assert.equal(welcome.graceMs, LIMITS.resumeGraceMs);
  assert.equal(h.server.counters.resumes, 1);
  assert.equal(h.server.playerCount, 1);
  // The same ship: it played on in the instance while the link was dead (a silent player
  // is parked after 0.5 s), so its HP is what it was, or less only from the first 0.5 s.
  const now = ship(h, c);
  assert.ok(now.hp <= before.hp && now.hp >= before.hp - 1, `hp ${before.hp} → ${now.hp}`);
  assert.equal(now.away, false, "back in the fight");
  // Snapshots flow again and the replica holds the bullets.
  const snaps = c.transport.sent.filter((s) => s.latest).length;
  h.pump(500);
  assert.ok(c.transport.sent.filter((s) => s.latest).length > snaps + 5, "snapshots again");
  assert.ok(c.runtime.replica.count > 0, "the replica fast-forwarded the live bullets");
  // The client dropped its baselines at the Enter: the server's first snapshot is whole,
  // so the boss is on screen at once and no delta is thrown away for want of a base.
  const first = c.transport.messages().find((m) => m.kind === ServerKind.Snapshot);
  assert.ok(first?.kind === ServerKind.Snapshot && first.baseTick === undefined, "whole");
  assert.equal(c.runtime.snapshotsWithoutBaseline, 0, "no delta without its baseline");
  assert.ok(c.runtime.boss() !== null, "the boss fight goes on");
  // It steers again: the new connection's frames are what the world moves the ship by.
  const instance = h.server.instances.get(c.runtime.instanceId)!;
  const x0 = ship(h, c).x;
  const toCentre = x0 < instance.world.def.arena.widthPx / 2 ? 1 : -1;
  c.control = () => ({ moveX: 100 * toCentre, moveY: 0, aim: 0, buttons: 0 });
  h.pump(500);
  const moved = (ship(h, c).x - x0) * toCentre;
  assert.ok(moved > 40, `steered ${moved} px toward the centre in 0.5 s`);
});

Deno.test("while its link is down a ship waits parked: not hit, not aimed at, frozen, for the grace", () => {
  const { h, c } = inBossFight();
  using _h = h;
  h.pump(500);
  // The server hears the socket fail (1006): the session detaches at once.
  c.link.kill();
  c.conn.closed("1006", "socket error");
  const p = ship(h, c);
  assert.equal(p.away, true, "parked");
  assert.equal(h.server.playersAway, 1);
  const { x, y, hp } = p;
  h.pump(LIMITS.resumeGraceMs - 500);
  assert.equal(p.hp, hp, "nothing hit it");
  assert.deepEqual([p.x, p.y], [x, y], "it did not move");
  assert.equal(h.server.playerCount, 1, "still waiting");
  const instance = h.server.instances.get(c.runtime.instanceId)!;
  assert.equal(instance.world.nearestPlayer(640, 200), undefined, "no enemy aims at it");
  // Back just inside the grace: the same ship, i-frames to get its bearings.
  h.reconnect(c);
  h.runUntil(() => c.runtime.phase === "playing", { maxMs: 1000, what: "resumed" });
  assert.equal(ship(h, c), p, "the very same ship");
  assert.equal(p.away, false);
  assert.ok(p.iframeTicks > 0, "a moment of invulnerability on return");
  assert.equal(h.server.playersAway, 0);
});

Deno.test("after the grace the run is over: the token brings a fresh start in the hub and says why", () => {
  const { h, c } = inBossFight();
  using _h = h;
  c.link.kill();
  c.conn.closed("1006", "socket error");
  h.pump(LIMITS.resumeGraceMs + 100);
  assert.equal(h.server.playerCount, 0, "the session ended");
  assert.equal(h.server.instances.size, 1, "its dungeon went with it");
  h.reconnect(c);
  h.runUntil(() => c.runtime.phase === "playing" && c.runtime.world !== undefined, {
    maxMs: 1000,
    what: "a fresh start",
  });
  assert.equal(c.runtime.world?.kind, "hub");
  assert.equal(c.enters.at(-1)?.value.reason, EnterReason.Join);
  const [notice] = notices(c);
  assert.ok(notice?.kind === ServerKind.Notice);
  assert.equal(notice.code, NoticeCode.ResumeExpired);
  assert.match(notice.text, /away for more than 15 s.*back in the hub/);
  assert.equal(h.server.counters.resumeRefusals.expired, 1);
  assert.equal(h.server.playerCount, 1, "one player again: the fresh one");
});

Deno.test("a token is single-use: once its resume has spoken, a second use is refused", () => {
  const { h, c } = inBossFight();
  using _h = h;
  const token = c.runtime.resumeToken!;
  h.reconnect(c, { resume: token });
  h.runUntil(() => c.runtime.phase === "playing", { maxMs: 1000, what: "first resume" });
  h.pump(200); // the new connection pings and sends input: the old token is spent
  const thief = h.connect("Thief", { resume: token });
  h.runUntil(() => notices(thief).length > 0, { maxMs: 1000, what: "the refusal" });
  const [notice] = notices(thief);
  assert.ok(notice.kind === ServerKind.Notice && notice.code === NoticeCode.ResumeRefused);
  assert.match(notice.text, /already used/);
  assert.notEqual(thief.runtime.playerId, c.runtime.playerId, "not Ada's session");
  assert.equal(c.transport.closedWith, undefined, "Ada plays on");
  assert.equal(c.runtime.instanceId.startsWith("dungeon-"), true);
});

Deno.test("a resume whose connection dies before speaking leaves its token good for one more try", () => {
  const { h, c } = inBossFight();
  using _h = h;
  const token = c.runtime.resumeToken!;
  // A slow new link: the server takes the session back, but the link dies before its
  // Welcome reaches the client, which tries again with the same token.
  h.reconnect(c, { resume: token, link: { spec: "50" } });
  h.runUntil(() => h.server.counters.resumes === 1, { maxMs: 1000, what: "the first resume" });
  assert.equal(c.runtime.phase, "reconnecting", "the Welcome has not arrived");
  h.reconnect(c, { resume: token });
  h.runUntil(() => c.runtime.phase === "playing" && h.server.counters.resumes === 2, {
    maxMs: 1000,
    what: "the second resume with the same token",
  });
  assert.equal(c.enters.at(-1)?.value.reason, EnterReason.Resume);
});

Deno.test("forged, foreign and malformed tokens are refused: a fresh player, told why", () => {
  using h = new NetHarness();
  const ada = h.connect("Ada");
  h.pump(100);
  const real = ada.runtime.resumeToken!;
  const [body, tag] = real.split(".");
  const foreign = new TokenSigner(new Uint8Array(32).fill(9)).sign("resume", {
    payload: JSON.parse(atob(body.replace(/-/g, "+").replace(/_/g, "/")))[2],
    expiresAtMs: 1e12,
  });
  const cases: [what: string, token: string, text: RegExp][] = [
    [
      "a changed tag",
      `${body}.${tag.startsWith("A") ? "B" : "A"}${tag.slice(1)}`,
      /not signed here/,
    ],
    ["another server's secret", foreign, /not signed here/],
    ["garbage", "not-a-token", /malformed/],
  ];
  for (const [i, [what, token, text]] of cases.entries()) {
    const c = h.connect(`Forger ${i}`, { resume: token });
    h.runUntil(() => notices(c).length > 0, { maxMs: 1000, what });
    const [notice] = notices(c);
    assert.ok(notice.kind === ServerKind.Notice);
    assert.equal(notice.code, NoticeCode.ResumeRefused, what);
    assert.match(notice.text, text, what);
    assert.notEqual(c.runtime.playerId, ada.runtime.playerId, `${what}: not Ada's session`);
  }
  assert.equal(h.server.counters.resumeRefusals.refused, 3);
  assert.equal(ada.transport.closedWith, undefined);
});

Deno.test("an expired token is refused as expired, even while its session waits; fresh ones renew", () => {
  const ttl = 4000;
  using h = new NetHarness({ limits: { resumeTokenTtlMs: ttl, resumeGraceMs: 20_000 } });
  const c = h.connect("Ada");
  h.pump(100);
  const first = c.runtime.resumeToken!;
  // Connected players get a fresh token at half its life.
  h.pump(ttl / 2 + 600);
  assert.ok(kinds(c.transport).includes(ServerKind.Token), "a Token message came");
  assert.notEqual(c.runtime.resumeToken, first);
  // The link drops; the first token's time runs out while the session still waits.
  c.link.kill();
  c.conn.closed("1006", "socket error");
  h.pump(ttl / 2 + 400);
  assert.equal(h.server.playersAway, 1, "still within the grace");
  const other = h.connect("Bo", { resume: first });
  h.runUntil(() => notices(other).length > 0, { maxMs: 1000, what: "expired" });
  const [notice] = notices(other);
  assert.ok(notice.kind === ServerKind.Notice && notice.code === NoticeCode.ResumeExpired);
  assert.match(notice.text, /token had expired/);
  // The renewed token still works.
  h.reconnect(c);
  h.runUntil(() => c.runtime.phase === "playing" && h.server.counters.resumes === 1, {
    maxMs: 1000,
    what: "resume with the renewed token",
  });
});

Deno.test("a crowd that arrived together gets its fresh tokens a few a sweep, not all in one tick", () => {
  const ttl = 20_000;
  using h = new NetHarness({ limits: { resumeTokenTtlMs: ttl } });
  const crowd = Array.from({ length: 40 }, (_, i) => h.connect(`P${i}`));
  h.runUntil(() => crowd.every((c) => c.runtime.resumeToken !== undefined), {
    what: "every Welcome",
  });
  const first = crowd.map((c) => c.runtime.resumeToken);
  const renewed = () => crowd.reduce((n, c) => n + (c.conn.sent(ServerKind.Token)), 0);
  h.pump(ttl / 2 - 1000, 17);
  assert.equal(renewed(), 0, "none before half the token's life");
  // Every token falls due on the same sweep; the server renews them over several.
  const start = h.ticks;
  let most = 0;
  let firstAt = -1;
  while (renewed() < crowd.length && h.ticks - start < 600) {
    const before = renewed();
    h.runTicks(1, 17);
    if (before === 0 && renewed() > 0) firstAt = h.ticks;
    most = Math.max(most, renewed() - before);
  }
  assert.equal(renewed(), crowd.length, "every connected player got a fresh token");
  assert.ok(
    most > 0 && most < crowd.length,
    `at most ${most} in one tick, not all ${crowd.length}`,
  );
  // The last waited a few sweeps (half a second each) after the first, far inside its
  // token's other half.
  const waited = h.ticks - firstAt;
  assert.ok(waited <= 3 * 30, `the last renewed ${waited} ticks after the first`);
  h.pump(200, 17);
  crowd.forEach((c, i) => assert.notEqual(c.runtime.resumeToken, first[i], `${c.name} holds it`));
});

Deno.test("a player who hangs up (1000) or is cut off by the door for cause ends the session at once; a failed link or a closed tab keeps it", () => {
  using h = new NetHarness();
  const quitter = h.connect("Quitter");
  const dropped = h.connect("Dropped");
  const tabClosed = h.connect("Tab Closed");
  // The front door's closes for cause, which it reports to the server with their codes.
  const cutOff = ["1002", "4000", "4003", "4004"].map((code) => ({
    code,
    c: h.connect(`Cut ${code}`),
  }));
  h.pump(100);
  h.disconnect(quitter, "1000", "bye");
  for (const { code, c } of cutOff) h.disconnect(c, code, "closed by the front door");
  h.disconnect(tabClosed, "1001", "going away"); // a reload resumes
  dropped.link.kill();
  dropped.conn.closed("1006", "abnormal");
  assert.equal(h.server.playerCount, 2, "the dropped link and the closed tab wait");
  assert.equal(h.server.playersAway, 2);
  assert.equal(h.server.counters.detaches, 2);
});

Deno.test("a silent player in a dungeon is parked after 0.5 s; its next frame unparks it with no more i-frames than it waited", () => {
  const { h, c } = inBossFight();
  using _h = h;
  h.pump(200);
  const p = ship(h, c);
  assert.equal(p.away, false, "playing");
  // The page freezes: no input, the socket stays up (a frozen tab stops sending).
  c.runtime.reconnecting();
  const silentFrom = h.ticks;
  h.runUntil(() => p.away, { maxMs: 2000, what: "parked" });
  const parkedAt = h.ticks;
  assert.ok(
    parkedAt - silentFrom >= AWAY_AFTER_SILENT_TICKS,
    `parked after ${parkedAt - silentFrom} ticks`,
  );
  assert.ok(
    parkedAt - silentFrom <= AWAY_AFTER_SILENT_TICKS + 15,
    "within the lead of its last frames",
  );
  h.runTicks(18);
  c.runtime.phase = "playing"; // the page wakes up
  h.runUntil(() => !p.away, { maxMs: 500, what: "unparked" });
  const parkedFor = h.ticks - parkedAt;
  assert.ok(p.iframeTicks > 0, "a moment to look around");
  assert.ok(
    p.iframeTicks <= parkedFor,
    `${p.iframeTicks} i-frames after ${parkedFor} ticks parked`,
  );
});

Deno.test("in the hub a silent player just stands: nothing there can hurt it", () => {
  using h = new NetHarness();
  const c = h.connect("Idle");
  h.pump(2000);
  const p = h.server.hub.world.players.get(c.runtime.playerId)!;
  assert.equal(p.away, false);
});
