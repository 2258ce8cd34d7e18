/**
 * `deno task fairness`: is what a player sees what the server judged, at real ping?
 *
 * The real GameServer and two real ClientRuntimes (the measured pilot and a remote
 * ally) in one process on a ManualClock, every message through the real codec and
 * the link simulator (net/link) in both directions: direct, 75 ± 25 ms with stalls,
 * 150 ± 50 ms, and 150 ± 50 ms with stalls (a 250 ms stall about every 4 s each way).
 * Both pilots walk into the portal and fight the dungeon with the shared pilot brain,
 * which sees only what the runtime would draw. The measured client "renders" at
 * 60 frames/s: each frame records the drawn ship, enemies, ally and own shots, and
 * the server's decisions are read off its world as they happen.
 *
 * One JSON line per condition on stdout, the last one 150 ± 50 with stalls:
 *   ownShotSpawnPx      max distance between an own shot and the ship when first drawn
 *   shotOvershootP90Px  p90 of how far past the drawn enemy's near edge (along its path) an
 *                       own shot is on the last frame it is drawn, for shots the server
 *                       says hit that enemy
 *   contactGapMaxPx     max drawn gap between the enemy's edge and the ship's edge on the
 *                       frame drawing the tick the server landed contact damage
 *   remoteJumpMaxPx     largest single-frame step of the ally's drawn ship (not counting
 *                       the frame it appears after a transfer)
 *   correctionsPerMin   the measured client's prediction corrections per minute
 * Sample counts and medians go to stderr, among them how far the ally's shots are from
 * the ally's drawn ship on the frame each is first drawn (`allyShotSpawn…`, the ones it
 * fired while the measured client was there; `allyShotsSpawnedOver20Px`), and, for
 * those the server says hit an enemy, from the drawn enemy's edge on the last frame
 * each is drawn (`allyHitGap…`: negative inside it), and how long after an own shot
 * vanished on an enemy its hit was felt (`hitFelt…`: the flash and the sound, at once when
 * the shot vanished on the enemy as drawn, else when the server's hit arrived), with the
 * strikes no hit of the server's claimed (`strikesUnclaimed`: a flash that lied), and how
 * long after the shot that killed an enemy was gone the enemy was too (`killSeen…`).
 *
 *   deno task fairness [--seconds 240] [--seed 1] [--only 150±50,stall=250/4000]
 */
import { CONTENT, PLAYER } from "../content/mod.ts";
import { ClientRuntime, type InputSample } from "../net/client/mod.ts";
import {
  formatLinkSpec,
  LinkPipe,
  LinkSim,
  type LinkSpec,
  parseLinkSpec,
} from "../net/link/mod.ts";
import { GameServer, ManualClock, type Transport } from "../net/server/mod.ts";
import { HitTarget, type SimEvent, type SimWorld, Team } from "../sim/mod.ts";
import { think } from "../sim/pilot.ts";

/** The conditions, in print order: the last is the one the targets are about. */
export const CONDITIONS = ["0", "75±25,stall=250/4000", "150±50", "150±50,stall=250/4000"];

/** One condition's figures (the JSON line). */
export interface FairnessLine {
  link: string;
  ownShotSpawnPx: number;
  shotOvershootP90Px: number;
  contactGapMaxPx: number;
  remoteJumpMaxPx: number;
  correctionsPerMin: number;
}

/** Sample counts and medians behind a line. */
export interface FairnessDetail {
  shots: number;
  shotSpawnMedianPx: number;
  hits: number;
  hitsMeasured: number;
  overshootMedianPx: number;
  contacts: number;
  contactsMeasured: number;
  remoteFrames: number;
  remoteStepMedianPx: number;
  corrections: number;
  minutes: number;
  framesWithTwoTicks: number;
  /** Own shots drawn by prediction, then matched to the server's volley or taken back. */
  predicted: number;
  confirmed: number;
  refused: number;
  /** Own shots the server fired. */
  serverShots: number;
  /** The measured client's input lead over the server's estimated tick, frame by frame. */
  inputLeadMedianTicks: number;
  inputLeadMaxTicks: number;
  /**
   * The ally's shots fired while the measured client watched (not those already in flight
   * when it arrived), and their distance from the ally's drawn ship when first drawn.
   */
  allyShots: number;
  allyShotSpawnMedianPx: number;
  allyShotSpawnP90Px: number;
  allyShotSpawnMaxPx: number;
  /** Of those, the ones first drawn more than 20 px from the ship (mid-flight). */
  allyShotsSpawnedOver20Px: number;
  allyHits: number;
  allyHitGapMedianPx: number;
  allyHitGapP90Px: number;
  /**
   * Enemies the measured player's shots killed, and how long after the killing shot was
   * gone from the screen the enemy was too.
   */
  kills: number;
  killSeenMedianMs: number;
  killSeenP90Ms: number;
  /** Own hits on enemies the runtime reported, and those already felt at a strike. */
  ownHitsHeard: number;
  ownHitsFeltAtStrike: number;
  /** Own hits on enemies measured on drawn frames, and how long after the shot vanished each was felt. */
  hitsFelt: number;
  hitFeltMedianMs: number;
  hitFeltP90Ms: number;
  /** Shots that vanished on an enemy as drawn, and those no hit of the server's claimed. */
  strikes: number;
  strikesUnclaimed: number;
  /** Strikes on enemies the server had already killed (their deaths not yet drawn). */
  strikesOverkill: number;
}

const FRAME_MS = 1000 / 60;
/** The browser also updates from an 8 ms timer between frames. */
const UPDATES_PER_FRAME = 2;
/** Frames kept for looking back (contact lands after the client drew its tick). */
const HISTORY_FRAMES = 240;

interface Frame {
  readonly atMs: number;
  readonly tick: number;
  readonly instanceId: string;
  readonly self: { x: number; y: number } | undefined;
  readonly enemies: Map<number, { x: number; y: number; r: number }>;
  readonly ally: { x: number; y: number } | undefined;
  /** Own shots by `instance/uid` (uids are per instance), under the uid first drawn. */
  readonly shots: Map<string, { x: number; y: number; dx: number; dy: number }>;
  /**
   * The ally's shots by `instance/uid`, wherever the runtime draws them; `fired`: one
   * fired since the Enter (the ones in flight then were never at a muzzle here).
   */
  readonly allyShots: Map<string, { x: number; y: number; fired: boolean }>;
}

interface Pilot {
  readonly name: string;
  readonly runtime: ClientRuntime;
  readonly style: number;
  /** Preferred distance from the nearest target (the measured pilot brawls). */
  readonly rangePx?: number;
}

/** Runs one condition for `seconds` of game time. */
export function runFairness(
  spec: LinkSpec | undefined,
  opts: { seconds: number; seed: number },
): { line: FairnessLine; detail: FairnessDetail } {
  const clock = new ManualClock();
  const server = new GameServer({ clock, seed: opts.seed });
  server.start();
  const observed = new WeakSet<SimWorld>();
  /** When the measured client felt each of its hits on an enemy, by the server's `instance/uid`. */
  const feltAt = new Map<string, number>();
  /** The measured player's hits on enemies the runtime reported, and those a strike foretold. */
  let ownHitsHeard = 0;
  let ownHitsFeltAtStrike = 0;
  const pilots: Pilot[] = [];
  const pipes: { clear(): void }[] = [];
  /** Server uid → the uid the shot was first drawn under (predicted shots). */
  const aliases = new Map<string, string>();
  const outcomes = { predicted: 0, confirmed: 0, refused: 0 };

  for (const [i, name] of ["Measured", "Ally"].entries()) {
    const link = new LinkSim(spec ?? NO_LINK, {
      startMs: 0,
      stream: opts.seed * 31 + i,
    });
    const server_: { conn?: ReturnType<GameServer["open"]> } = {};
    const up = new LinkPipe<Uint8Array>(link.up, {
      clock,
      deliver: (data) => server_.conn?.receive(data),
    });
    const runtime: ClientRuntime = new ClientRuntime({
      send: (data) => up.send(data),
      // When each own hit on an enemy was felt: the strike's moment, or the hit's arrival.
      onHit: (hit, info) => {
        if (i !== 0 || hit.target !== HitTarget.Enemy) return;
        const uid = `${runtime.instanceId}/${hit.uid}`;
        if (!myShotUids.has(uid)) return;
        feltAt.set(uid, info.feltAtMs ?? clock.now());
        ownHitsHeard++;
        if (info.feltAtMs !== undefined) ownHitsFeltAtStrike++;
      },
      // A predicted shot changes its uid to the server's once confirmed: one shot, two names.
      onOwnShot: (note) => {
        if (i !== 0) return;
        outcomes[note.outcome]++;
        const at = runtime.instanceId;
        if (note.serverUid !== undefined) {
          aliases.set(`${at}/${note.serverUid}`, `${at}/${note.uid}`);
        }
      },
    });
    const down = new LinkPipe<() => void>(link.down, { clock, deliver: (f) => f() });
    // Each message is delivered on its own (a frame of one message is that message).
    const transport: Transport = {
      kind: "websocket",
      datagrams: false,
      flush: () => {},
      sendReliable: (data) => down.send(() => runtime.receive(data, clock.now())),
      sendLatest: (data) => {
        down.send(() => runtime.receive(data, clock.now()));
        return true;
      },
      close: (_code, reason) => down.send(() => runtime.closed(reason)),
      // An in-process pipe with no socket behind it: nothing ever waits to leave.
      bufferedBytes: 0,
    };
    server_.conn = server.open(transport, `10.0.0.${i + 1}`);
    pipes.push(up, down);
    runtime.hello(name, clock.now());
    pilots.push({ name, runtime, style: i, rangePx: i === 0 ? 40 : undefined });
  }
  const [me, ally] = pilots;

  // What the server decided, tick by tick, about the measured player.
  const myShotUids = new Set<string>();
  const allyShotUids = new Set<string>();
  const pendingHits: { uid: string; enemyId: number; tick: number }[] = [];
  const pendingAllyHits: { uid: string; enemyId: number }[] = [];
  /** Enemies the measured player's shots killed, by the killing shot. */
  const pendingKills: { uid: string; enemyId: number }[] = [];
  const contacts: { tick: number; enemyId: number }[] = [];
  const observe = (
    at: { world: SimWorld; instanceId: string },
    tick: number,
    events: readonly SimEvent[],
  ) => {
    const { world, instanceId } = at;
    const myId = me.runtime.playerId;
    let shotHitMe = false;
    let hurt = false;
    for (const e of events) {
      if (e.type === "volley" && e.volley.team === Team.Player) {
        const uids = e.volley.owner === myId
          ? myShotUids
          : e.volley.owner === ally.runtime.playerId
          ? allyShotUids
          : undefined;
        for (let b = 0; b < e.volley.angles.length; b++) {
          uids?.add(`${instanceId}/${e.volley.uid0 + b}`);
        }
      } else if (e.type === "bulletHit") {
        const uid = `${instanceId}/${e.uid}`;
        if (e.target === HitTarget.Enemy && myShotUids.has(uid)) {
          pendingHits.push({ uid, enemyId: e.targetId, tick });
        }
        if (e.target === HitTarget.Enemy && allyShotUids.has(uid)) {
          pendingAllyHits.push({ uid, enemyId: e.targetId });
        }
        if (e.target === HitTarget.Player && e.targetId === myId) shotHitMe = true;
      } else if (e.type === "enemyKilled") {
        // Killed by the measured player's shot: the last hit on it this step was theirs.
        const killing = events.findLast((h) =>
          h.type === "bulletHit" && h.target === HitTarget.Enemy && h.targetId === e.enemyId
        );
        const uid = killing?.type === "bulletHit" ? `${instanceId}/${killing.uid}` : "";
        if (myShotUids.has(uid)) pendingKills.push({ uid, enemyId: e.enemyId });
      } else if (e.type === "playerHit" && e.playerId === myId) {
        hurt = true;
      }
    }
    if (!hurt || shotHitMe) return;
    const p = world.players.get(myId);
    if (!p) return;
    // Contact: which enemy touches the ship now (the boss is never drawn off its spot).
    for (const en of world.enemies) {
      if (Math.hypot(en.x - p.x, en.y - p.y) <= en.def.radiusPx + PLAYER.radiusPx) {
        contacts.push({ tick, enemyId: en.id });
        return;
      }
    }
  };
  const watchWorlds = () => {
    for (const instance of server.instances.values()) {
      const world = instance.world;
      if (observed.has(world)) continue;
      observed.add(world);
      // A measuring tool's tap on the server's decisions: the step is the real one.
      const step = world.step.bind(world);
      world.step = (inputs) => {
        const tick = world.tick;
        const events = step(inputs);
        observe({ world, instanceId: instance.id }, tick, events);
        return events;
      };
    }
  };

  const frames: Frame[] = [];
  const spawnPx: number[] = [];
  const seenShots = new Set<string>();
  const overshootPx: number[] = [];
  const contactGapPx: number[] = [];
  const remoteStepPx: number[] = [];
  const allySpawnPx: number[] = [];
  const allyHitGapPx: number[] = [];
  const seenAllyShots = new Set<string>();
  const inputLeadTicks: number[] = [];
  let hitsMeasured = 0;
  const unfelt: { uid: string; vanishedAtMs: number }[] = [];
  const hitFeltMs: number[] = [];
  const killSeenMs: number[] = [];
  let twoTickFrames = 0;

  const sample = (p: Pilot, nowMs: number) => (tick: number): InputSample => {
    const rt = p.runtime;
    const world = rt.world;
    const self = rt.selfView();
    if (!world || !self) return { moveX: 0, moveY: 0, aim: 0, buttons: 0 };
    const targets = world.kind === "hub" ? [] : rt.enemies(nowMs).map((e) => ({
      x: e.x,
      y: e.y,
      r: CONTENT.enemies[e.kind].radiusPx,
    }));
    const boss = rt.boss();
    const def = world.boss;
    if (boss && boss.hp > 0 && def) targets.push({ x: def.x, y: def.y, r: def.radiusPx });
    const f = think(
      { self, arena: world.arena, targets, bullets: rt.replica, goal: world.portals[0] },
      {
        tick,
        style: p.style,
        rangePx: p.rangePx,
      },
    );
    return { moveX: f.moveX, moveY: f.moveY, aim: f.aim, buttons: f.buttons };
  };

  const totalFrames = Math.round((opts.seconds * 1000) / FRAME_MS);
  for (let f = 0; f < totalFrames; f++) {
    for (let u = 0; u < UPDATES_PER_FRAME; u++) {
      clock.advance(FRAME_MS / UPDATES_PER_FRAME);
      watchWorlds();
      const now = clock.now();
      for (const p of pilots) p.runtime.update(now, sample(p, now));
    }
    const now = clock.now();
    const rt = me.runtime;
    const prev = frames[frames.length - 1];
    const frame = drawFrame(rt, { allyId: ally.runtime.playerId, nowMs: now, aliases });
    frames.push(frame);
    if (frames.length > HISTORY_FRAMES) frames.shift();
    if (prev && frame.tick - prev.tick >= 2) twoTickFrames++;
    if (!frame.self) continue;
    if (Number.isFinite(rt.inputLeadTicks)) inputLeadTicks.push(rt.inputLeadTicks);

    // Own shots: where each is first drawn, relative to the ship.
    for (const [uid, s] of frame.shots) {
      if (seenShots.has(uid)) continue;
      seenShots.add(uid);
      spawnPx.push(Math.hypot(s.x - frame.self.x, s.y - frame.self.y));
    }
    // The ally's shots: where each is first drawn, relative to the ally's drawn ship.
    for (const [uid, s] of frame.allyShots) {
      if (seenAllyShots.has(uid)) continue;
      seenAllyShots.add(uid);
      if (frame.ally && s.fired) {
        allySpawnPx.push(Math.hypot(s.x - frame.ally.x, s.y - frame.ally.y));
      }
    }
    // The ally's hits on enemies: the last frame each shot was drawn (none: never drawn).
    for (let i = pendingAllyHits.length - 1; i >= 0; i--) {
      const h = pendingAllyHits[i];
      if (frame.allyShots.has(h.uid)) continue;
      pendingAllyHits.splice(i, 1);
      const last = lastFrameWith(frames, (fr) => fr.allyShots.has(h.uid));
      const shot = last?.allyShots.get(h.uid);
      const enemy = last?.enemies.get(h.enemyId);
      if (shot && enemy) {
        allyHitGapPx.push(Math.hypot(shot.x - enemy.x, shot.y - enemy.y) - enemy.r);
      }
    }
    // Hits the server landed: measured on the last frame the shot was drawn.
    for (let i = pendingHits.length - 1; i >= 0; i--) {
      const h = pendingHits[i];
      const uid = aliases.get(h.uid) ?? h.uid;
      if (frame.shots.has(uid)) continue;
      pendingHits.splice(i, 1);
      const last = lastFrameWith(frames, (fr) => fr.shots.has(uid));
      const shot = last?.shots.get(uid);
      const enemy = last?.enemies.get(h.enemyId);
      if (!last || !shot || !enemy) continue;
      // Gone from the frame after its last one: felt then, or when the server's word came.
      unfelt.push({ uid: h.uid, vanishedAtMs: last.atMs + FRAME_MS });
      hitsMeasured++;
      overshootPx.push((shot.x - enemy.x) * shot.dx + (shot.y - enemy.y) * shot.dy + enemy.r);
    }
    for (let i = unfelt.length - 1; i >= 0; i--) {
      const at = feltAt.get(unfelt[i].uid);
      if (at === undefined) continue;
      hitFeltMs.push(at - unfelt[i].vanishedAtMs);
      unfelt.splice(i, 1);
    }
    // Kills: from the frame the killing shot is gone to the first that no longer draws
    // the enemy (the kill is known on the server a lead after the client drew the shot).
    for (let i = pendingKills.length - 1; i >= 0; i--) {
      const k = pendingKills[i];
      const uid = aliases.get(k.uid) ?? k.uid;
      if (frame.shots.has(uid)) continue;
      const last = lastFrameWith(frames, (fr) => fr.shots.has(uid));
      if (!last) {
        pendingKills.splice(i, 1);
        continue;
      }
      const gone = frames.find((fr) => fr.atMs > last.atMs && !fr.enemies.has(k.enemyId));
      if (!gone) continue;
      pendingKills.splice(i, 1);
      killSeenMs.push(gone.atMs - (last.atMs + FRAME_MS));
    }
    // Contact: the frame that drew the tick the server landed it on.
    for (let i = contacts.length - 1; i >= 0; i--) {
      const c = contacts[i];
      const drawn = frames.find((fr) => fr.tick >= c.tick);
      if (!drawn || drawn.tick < c.tick) continue;
      contacts.splice(i, 1);
      const enemy = drawn.enemies.get(c.enemyId);
      if (!enemy || !drawn.self) continue;
      contactGapPx.push(
        Math.hypot(enemy.x - drawn.self.x, enemy.y - drawn.self.y) - enemy.r - PLAYER.radiusPx,
      );
    }
    // The ally's ship, frame to frame, inside one instance.
    if (prev && prev.instanceId === frame.instanceId && prev.ally && frame.ally) {
      remoteStepPx.push(Math.hypot(frame.ally.x - prev.ally.x, frame.ally.y - prev.ally.y));
    }
  }
  server.shutdown("fairness run over");
  for (const p of pipes) p.clear();

  const minutes = opts.seconds / 60;
  const line: FairnessLine = {
    link: spec ? formatLinkSpec(spec) : "direct",
    ownShotSpawnPx: round1(max(spawnPx)),
    shotOvershootP90Px: round1(quantile(overshootPx, 0.9)),
    contactGapMaxPx: round1(max(contactGapPx)),
    remoteJumpMaxPx: round1(max(remoteStepPx)),
    correctionsPerMin: round1(me.runtime.stats.corrections / minutes),
  };
  const detail: FairnessDetail = {
    shots: spawnPx.length,
    shotSpawnMedianPx: round1(quantile(spawnPx, 0.5)),
    hits: hitsMeasured + pendingHits.length,
    hitsMeasured,
    overshootMedianPx: round1(quantile(overshootPx, 0.5)),
    contacts: contactGapPx.length + contacts.length,
    contactsMeasured: contactGapPx.length,
    remoteFrames: remoteStepPx.length,
    remoteStepMedianPx: round1(quantile(remoteStepPx, 0.5)),
    corrections: me.runtime.stats.corrections,
    minutes,
    framesWithTwoTicks: twoTickFrames,
    predicted: outcomes.predicted,
    confirmed: outcomes.confirmed,
    refused: outcomes.refused,
    serverShots: myShotUids.size,
    inputLeadMedianTicks: round1(quantile(inputLeadTicks, 0.5)),
    inputLeadMaxTicks: round1(max(inputLeadTicks)),
    allyShots: allySpawnPx.length,
    allyShotSpawnMedianPx: round1(quantile(allySpawnPx, 0.5)),
    allyShotSpawnP90Px: round1(quantile(allySpawnPx, 0.9)),
    allyShotSpawnMaxPx: round1(max(allySpawnPx)),
    allyShotsSpawnedOver20Px: allySpawnPx.filter((px) => px > 20).length,
    allyHits: allyHitGapPx.length,
    allyHitGapMedianPx: round1(quantile(allyHitGapPx, 0.5)),
    allyHitGapP90Px: round1(quantile(allyHitGapPx, 0.9)),
    hitsFelt: hitFeltMs.length,
    hitFeltMedianMs: round1(quantile(hitFeltMs, 0.5)),
    hitFeltP90Ms: round1(quantile(hitFeltMs, 0.9)),
    strikes: me.runtime.strikesTotal,
    strikesUnclaimed: me.runtime.strikesUnclaimedTotal,
    strikesOverkill: me.runtime.strikesOverkillTotal,
    ownHitsHeard,
    ownHitsFeltAtStrike,
    kills: killSeenMs.length,
    killSeenMedianMs: round1(quantile(killSeenMs, 0.5)),
    killSeenP90Ms: round1(quantile(killSeenMs, 0.9)),
  };
  return { line, detail };
}

const NO_LINK: LinkSpec = {
  up: { delayMs: 0, jitterMs: 0, stallMs: 0, stallEveryMs: 0 },
  down: { delayMs: 0, jitterMs: 0, stallMs: 0, stallEveryMs: 0 },
  seed: 1,
};

/** What the measured client would draw this frame; shots keyed by the uid first drawn. */
function drawFrame(
  rt: ClientRuntime,
  opts: { allyId: number; nowMs: number; aliases: ReadonlyMap<string, string> },
): Frame {
  const { allyId, nowMs } = opts;
  const enemies = new Map<number, { x: number; y: number; r: number }>();
  for (const e of rt.enemies(nowMs)) {
    enemies.set(e.id, { x: e.x, y: e.y, r: CONTENT.enemies[e.kind].radiusPx });
  }
  const allyView = rt.remotePlayers(nowMs).find((p) => p.id === allyId);
  const shots = new Map<string, { x: number; y: number; dx: number; dy: number }>();
  const pool = rt.replica;
  for (let i = 0; i < pool.count; i++) {
    if (pool.team[i] !== Team.Player || pool.owner[i] !== rt.playerId) continue;
    const key = `${rt.instanceId}/${pool.uid[i]}`;
    const uid = opts.aliases.get(key) ?? key;
    shots.set(uid, { x: pool.x[i], y: pool.y[i], dx: pool.dirX[i], dy: pool.dirY[i] });
  }
  const allyShots = new Map<string, { x: number; y: number; fired: boolean }>();
  // The main replica holds an ally's shots only from the Enter's bullets in flight.
  for (const shots of [rt.replica, rt.allyShots]) {
    const fired = shots === rt.allyShots;
    for (let i = 0; i < shots.count; i++) {
      if (shots.team[i] !== Team.Player || shots.owner[i] !== allyId) continue;
      allyShots.set(`${rt.instanceId}/${shots.uid[i]}`, { x: shots.x[i], y: shots.y[i], fired });
    }
  }
  const self = rt.selfView();
  return {
    atMs: nowMs,
    tick: rt.replicaTick,
    instanceId: rt.instanceId,
    self: self && { x: self.x, y: self.y },
    enemies,
    ally: allyView && { x: allyView.x, y: allyView.y },
    shots,
    allyShots,
  };
}

function lastFrameWith(frames: readonly Frame[], has: (f: Frame) => boolean): Frame | undefined {
  for (let i = frames.length - 1; i >= 0; i--) if (has(frames[i])) return frames[i];
  return undefined;
}

function max(values: readonly number[]): number {
  return values.length === 0 ? 0 : values.reduce((a, b) => Math.max(a, b), -Infinity);
}

function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

function round1(v: number): number {
  return Math.round(v * 10) / 10;
}

function arg(name: string, fallback: string): string {
  const i = Deno.args.indexOf(`--${name}`);
  return i >= 0 && Deno.args[i + 1] !== undefined ? Deno.args[i + 1] : fallback;
}

if (import.meta.main) {
  const seconds = Number(arg("seconds", "240"));
  const seed = Number(arg("seed", "1"));
  const only = arg("only", "");
  for (const text of only ? [only] : CONDITIONS) {
    const spec = parseLinkSpec(text);
    const t0 = performance.now();
    const { line, detail } = runFairness(spec, { seconds, seed });
    console.error(
      `${line.link}: ${JSON.stringify(detail)} (${((performance.now() - t0) / 1000).toFixed(1)} s)`,
    );
    console.log(JSON.stringify(line));
  }
}
