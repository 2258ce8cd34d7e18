/**
 * The content registry: every world, boss, enemy and bullet kind passes the load-time
 * checks and really runs through the server's codec; bad values are caught at load
 * with the object and the field named; the hash tells two contents apart.
 */
import assert from "node:assert/strict";
import {
  type BossContent,
  CANTOR,
  checkedContent,
  CHOIR,
  CONTENT,
  type Content,
  ContentError,
  contentHash,
  FOLD,
  HUB,
  validateContent,
  WARDEN,
  type WorldContent,
} from "../../content/mod.ts";
import { Instance, type Peer } from "../../net/server/instance.ts";
import { MessageEncoder } from "../../net/wire/codec.ts";
import { EnterReason } from "../../net/wire/protocol.ts";
import { think, viewOfWorld } from "../../sim/pilot.ts";
import { runDungeon } from "../../tools/demo_run.ts";

const DEG = Math.PI / 180;

/** A peer that keeps nothing: the instance's encoding is what is under test. */
function peer(playerId: number): Peer {
  return { playerId, name: `p${playerId}`, sendReliable() {}, sendLatest: () => true };
}

Deno.test("every world, boss, enemy and bullet kind in the registry passes the load checks", () => {
  assert.deepEqual(validateContent(CONTENT), []);
  assert.ok(CONTENT.worlds.some((w) => w.kind === "hub"), "a hub");
  assert.ok(CONTENT.worlds.some((w) => w.kind === "dungeon"), "a dungeon");
  // Every portal leads to a world that exists, and every dungeon is reachable from home.
  const keys = new Set(CONTENT.worlds.map((w) => w.key));
  const home = CONTENT.worlds.find((w) => w.key === CONTENT.home)!;
  for (const w of CONTENT.worlds) {
    if (w.kind === "dungeon") {
      assert.ok(home.portals.some((p) => p.to === w.key), `${w.key} has a portal at home`);
    }
    for (const p of w.portals) assert.ok(keys.has(p.to), `${w.key} → ${p.to}`);
  }
});

Deno.test("every dungeon runs through the server's encoder from its first wave into its boss", () => {
  for (const [id, world] of CONTENT.worlds.entries()) {
    if (world.kind !== "dungeon") continue;
    const instance = new Instance(`test-${world.key}`, {
      worldId: id,
      def: world,
      seed: 3,
      encoder: new MessageEncoder(),
    });
    for (let p = 1; p <= 4; p++) instance.join(peer(p), EnterReason.Portal);
    let phases = 0;
    let bossTicks = 0;
    // Every event, volley and snapshot is encoded as the world plays: an off-grid
    // number or an id that does not fit its field would throw here. The boss's first
    // phase is played for 5 s (its other phases: the Choir's defeat below, sim tests).
    for (let t = 0; t < 60 * 120 && bossTicks < 300; t++) {
      const w = instance.world;
      for (const p of w.players.values()) {
        if (p.status !== "active") continue;
        instance.offerInput(p.id, think(viewOfWorld(w, p), { tick: w.tick, style: p.id }));
      }
      instance.step();
      phases = Math.max(phases, (w.boss?.phase ?? -1) + 1);
      if (w.stage === "boss") bossTicks++;
    }
    assert.ok(phases >= 1, `${world.key}: the boss appeared`);
  }
});

/** The registry with the Warden's Crease ring bullet changed. */
function wardenCurl(turnRadPerS: number): Content {
  const [vigil, crease, ...rest] = WARDEN.phases;
  const [a, b, ring] = crease.emitters;
  const boss = {
    ...WARDEN,
    phases: [vigil, {
      ...crease,
      emitters: [a, b, { ...ring, bullet: { ...ring.bullet, turnRadPerS } }],
    }, ...rest],
  };
  const fold = { ...FOLD, boss };
  return {
    ...CONTENT,
    worlds: [HUB, fold, ...CONTENT.worlds.slice(2)],
    bosses: [boss, ...CONTENT.bosses.slice(1)],
  };
}

Deno.test("a turn rate written in degrees is caught at load, naming the boss, phase, emitter and field", () => {
  const bad = wardenCurl(20 * DEG);
  const problems = validateContent(bad);
  assert.equal(problems.length, 1, problems.join("\n"));
  assert.match(
    problems[0],
    /^bosses\[0\] "The Warden of the Fold"\.phases\[1\] "Crease"\.emitters\[2\] \(ring\)\.bullet\.turnRadPerS: 0\.349\d* rad\/s is not a multiple of 1\/1000 \(the wire grid; try 0\.349\)$/,
  );
  assert.throws(() => checkedContent(bad), (err: unknown) => {
    assert.ok(err instanceof ContentError);
    assert.match(err.message, /Content is invalid:\n {2}bosses\[0\].*turnRadPerS/);
    return true;
  });
  assert.deepEqual(validateContent(wardenCurl(0.349)), [], "on the grid, it loads");
});

/** Cases of one bad value each: how to break the content, and what the check must say. */
const BAD: [string, (c: Content) => Content, RegExp][] = [
  [
    "a bullet radius off its 1/4 px grid",
    (c) => withHub(c, { player: { ...HUB.player, shot: { ...HUB.player.shot, radiusPx: 4.1 } } }),
    /^worlds\[0\] "hub"\.player\.shot\.radiusPx: 4\.1 px is not a multiple of 1\/4/,
  ],
  [
    "a shot speed off its grid",
    (c) => withHub(c, { player: { ...HUB.player, shotSpeedPxPerS: 700.1 } }),
    /^worlds\[0\] "hub"\.player\.shotSpeedPxPerS: 700\.1 px\/s is not a multiple of 1\/4/,
  ],
  [
    "more HP than a snapshot carries",
    (c) => withHub(c, { player: { ...HUB.player, maxHp: 300 } }),
    /^worlds\[0\] "hub"\.player\.maxHp: 300 is not a whole number in \[1, 255\]/,
  ],
  [
    "a portal to nowhere",
    (c) => withHub(c, { portals: [{ ...HUB.portals[0], to: "nowhere" }] }),
    /^worlds\[0\] "hub"\.portals\[0\]\.to: "nowhere" is not a world/,
  ],
  [
    "an arena wider than the wire's positions",
    (c) => withHub(c, { arena: { ...HUB.arena, widthPx: 5000 } }),
    /^worlds\[0\] "hub"\.arena\.widthPx: 5000 is outside \[1, 4095\.875\]/,
  ],
  [
    "two worlds with one key",
    (c) => ({ ...c, worlds: [HUB, { ...FOLD, key: "hub" }, ...c.worlds.slice(2)] }),
    /^worlds\[1\]\.key: "hub" is used twice/,
  ],
  [
    "a home that is not a hub",
    (c) => ({ ...c, home: FOLD.key }),
    /^content\.home: "fold" is not a hub/,
  ],
  [
    "an enemy whose id is not its place",
    (c) => ({ ...c, enemies: [c.enemies[1], c.enemies[0], c.enemies[2]] }),
    /^enemies\[0\] "Gunner"\.id: 1, but it is entry 0/,
  ],
  [
    "a bullet of an unknown kind",
    (c) => withHub(c, { player: { ...HUB.player, shot: { ...HUB.player.shot, kind: 99 } } }),
    /^worlds\[0\] "hub"\.player\.shot\.kind: 99 is not a bullet kind/,
  ],
  [
    "phases whose thresholds do not fall",
    (c) =>
      withWarden(c, (b) => ({ ...b, phases: [b.phases[0], { ...b.phases[1], fromHpFrac: 1 }] })),
    /^bosses\[0\] "The Warden of the Fold"\.phases\[1\] "Crease"\.fromHpFrac: 1 does not fall/,
  ],
  [
    "fewer phase colours than phases",
    (c) => withWarden(c, (b) => ({ ...b, look: { ...b.look, phaseColors: ["#ffffff"] } })),
    /^bosses\[0\] "The Warden of the Fold"\.look\.phaseColors: 1 colours for 4 phases/,
  ],
  [
    "a colour that is not one",
    (c) => withWarden(c, (b) => ({ ...b, look: { ...b.look, fill: "purple-ish" } })),
    /^bosses\[0\] "The Warden of the Fold"\.look\.fill: purple-ish is not #rrggbb/,
  ],
  [
    "a boss outside its arena",
    (c) => withWarden(c, (b) => ({ ...b, y: 2000 })),
    /^worlds\[1\] "fold"\.boss: "The Warden of the Fold" at \(640, 2000\) is not inside the arena/,
  ],
  [
    "a wave enemy the registry does not hold",
    (c) => {
      const stray = { ...c.enemies[2], hp: 99 };
      const fold = { ...FOLD, waves: [[{ enemy: stray, x: 10, y: 10 }]] };
      return { ...c, worlds: [HUB, fold, ...c.worlds.slice(2)] };
    },
    /^worlds\[1\] "fold"\.waves\[0\]\[0\]\.enemy: "Chaser" is not in CONTENT\.enemies/,
  ],
  [
    "a wall too fine for one volley",
    (c) =>
      withWarden(c, (b) => ({
        ...b,
        phases: b.phases.map((p) => ({
          ...p,
          emitters: p.emitters.map((e) => e.type === "wallGap" ? { ...e, spacingPx: 4 } : e),
        })),
      })),
    /^worlds\[1\] "fold"\.boss\.phases\[2\]\.emitters\[0\]\.spacingPx: 4 px makes walls of over 255/,
  ],
];

function withHub(c: Content, over: Partial<WorldContent>): Content {
  return { ...c, worlds: [{ ...HUB, ...over }, ...c.worlds.slice(1)] };
}

function withWarden(c: Content, change: (b: BossContent) => BossContent): Content {
  const boss = change(WARDEN);
  return {
    ...c,
    worlds: [HUB, { ...FOLD, boss }, ...c.worlds.slice(2)],
    bosses: [boss, ...c.bosses.slice(1)],
  };
}

Deno.test("each kind of bad value is caught at load with its object and field named", () => {
  for (const [what, breakIt, pattern] of BAD) {
    const problems = validateContent(breakIt(CONTENT));
    assert.ok(problems.length > 0, `${what}: caught`);
    assert.ok(problems.some((p) => pattern.test(p)), `${what}: ${problems.join(" | ")}`);
  }
});

Deno.test("the content hash changes with any value, even a word, and not otherwise", () => {
  assert.equal(contentHash(CONTENT), contentHash({ ...CONTENT }));
  const renamed = withWarden(CONTENT, (b) => ({
    ...b,
    phases: [{ ...b.phases[0], name: "Vigil!" }, ...b.phases.slice(1)],
  }));
  assert.notEqual(contentHash(renamed), contentHash(CONTENT));
  assert.notEqual(contentHash(wardenCurl(0.349)), contentHash(CONTENT));
});

Deno.test("the Sunken Choir, added from content alone, is fought through to the Cantor's defeat", () => {
  // Shots of 3 damage: every verse in under a minute of game time, the gate stays fast.
  const pilots = { ...CHOIR.player, shot: { ...CHOIR.player.shot, damage: 3 } };
  const summary = runDungeon({ ...CHOIR, player: pilots }, {
    players: 4,
    seed: 2,
    maxTicks: 60 * 240,
  });
  assert.equal(summary.bossDefeated, true, `not beaten in ${summary.ticks} ticks`);
  assert.equal(summary.events.waveStarted, CHOIR.waves.length);
  assert.equal(summary.events.bossPhase, CANTOR.phases.length, "every verse was sung");
  assert.ok(summary.peakLiveBullets >= 100, `a real bullet field (${summary.peakLiveBullets})`);
  // Its own words and colours, one per phase, none borrowed from the Warden.
  assert.deepEqual(CANTOR.phases.map((p) => p.name), ["Intonation", "Canon", "Fugue", "Coda"]);
  const wardenColors = new Set<string>(WARDEN.look.phaseColors);
  assert.ok(CANTOR.look.phaseColors.every((c) => !wardenColors.has(c)));
});
