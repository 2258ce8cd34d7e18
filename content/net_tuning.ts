/**
 * Netcode and server numbers: rates, the input audit's limits, prediction
 * thresholds and abuse limits. Operators override some through environment
 * variables (see main.ts); everything else is tuned here. Data only.
 */
import { ticks } from "../sim/mod.ts";

/**
 * Ships a client gets in each snapshot of a crowded instance (its own and the nearest
 * others); the roster counts the rest. 10 ships × 10 B at 20 Hz keeps a crowded hub
 * near 2.5 KB/s per client, however many share it.
 */
export const INTEREST_PLAYERS = 10;

/** Snapshots per second sent to each client. */
export const SNAPSHOT_HZ = 20;
/** Server ticks between two snapshots. */
export const TICKS_PER_SNAPSHOT = 60 / SNAPSHOT_HZ;
/**
 * Snapshots each side keeps as delta baselines (1.6 s): an acknowledgement older than
 * that gets a whole snapshot.
 */
export const SNAPSHOT_BASELINES = 32;
/**
 * Baselines the server keeps for a client on an ordered stream (WebSocket): everything
 * sent there arrives, so deltas are against the newest sent, the one kept. After a
 * snapshot lost on the way (a simulated link) the client asks for one against an older
 * base, which is gone: it gets a whole snapshot. Each one held is garbage that outlives
 * scavenges: keeping 8 promoted 11 times as much (43 MB against 3.9 in
 * `server-bench --crowd=200`, 3,600 ticks).
 */
export const ORDERED_SNAPSHOT_BASELINES = 1;

/** The input audit's limits. */
export const INPUT_LIMITS = {
  // A client leads by its RTT/2, twice the RTT's spread and the adaptive late-frame
  // lead (LATE_INPUT): up to ~45 ticks at 150 ± 50 ms with stalls. One second is the
  // most a frame may claim; the queue holds a little less, so a flood is still a flood.
  maxLeadTicks: ticks(1),
  maxQueued: 48,
  coastTicks: ticks(0.25),
} as const;

/**
 * How input travels. Over a reliable stream (WebSocket) redundancy buys nothing, so
 * ticks are batched: fewer frames, each with 58 B of TCP/IP and WebSocket headers.
 * Over datagrams each message also repeats the 2 batches before it, so a lost datagram
 * costs nothing: its frames come again one batch later, which the lead's margin
 * (INPUT_LEAD_MARGIN_TICKS) covers. A 3-tick batch sends 20 datagrams a second, one per
 * snapshot interval: every datagram is a QUIC packet the server's stack acknowledges
 * with an ack-only packet of its own (quinn sends an ACK only when its 25 ms delay runs
 * out or a second packet arrives, never riding on the snapshot), so each batch tick
 * saved is a packet each way (2 ticks: 30 + 30 packets/s, 3 ticks: 20 + 20). The client
 * leads the server by `batchTicks − 1` extra ticks, so the oldest frame of a batch still
 * arrives before its tick runs.
 */
export const INPUT_SENDING = {
  reliable: { batchTicks: 4, redundancy: 1 },
  datagram: { batchTicks: 3, redundancy: 3 },
} as const;
/** A pong waits at most this long for a frame that goes anyway (snapshots come every 50 ms). */
export const PONG_MAX_HOLD_MS = 60;
/** Most messages one client frame may carry (an input batch and a ping, in practice). */
export const MAX_CLIENT_MESSAGES_PER_FRAME = 4;
/** Most input frames one message may carry (a batch and its redundant copies). */
export const MAX_INPUT_FRAMES_PER_MESSAGE = 12;

/**
 * A ship whose player sent no input for this long is parked (untouchable, not aimed at,
 * frozen) until its next frame: a frozen tab or a cut link must not cost the run. On
 * return it gets as many i-frames as it spent parked, at most the usual second.
 */
export const AWAY_AFTER_SILENT_TICKS = ticks(0.5);

/** Delays of server decisions. */
export const TRANSFER_DELAYS = {
  /** A dead player watches for this long before returning to the hub. */
  deathReturnTicks: ticks(2.5),
  /**
   * After the boss dies, the crew reads the results and picks "again" or "hub"; whoever
   * has not picked by then returns to the hub.
   */
  resultsReturnTicks: ticks(45),
} as const;

/** How long a finished run's crew may still choose "again with this crew", in ms. */
export const CREW_OFFER_MS = 120_000;

/** Scheduler: how far behind the loop may fall before it drops ticks instead of catching up. */
export const MAX_CATCHUP_TICKS = 5;

/** Prediction: errors above this snap, smaller ones are smoothed away. */
export const SNAP_THRESHOLD_PX = 24;
/** Fraction of the remaining visual error removed per rendered tick. */
export const SMOOTHING_PER_TICK = 0.2;
/** Reconciled errors below this are not counted as corrections. */
export const CORRECTION_EPSILON_PX = 0.5;
/** How other players' ships are drawn (net/client/remote_view.ts). */
export const REMOTE_VIEW = {
  /** Snapshot arrivals the jitter is measured over. */
  jitterWindowMs: 10_000,
  /** The share of snapshots the interpolation delay waits for (the rest: extrapolation). */
  jitterQuantile: 0.9,
  /** The shortest delay: one snapshot interval and a tick. */
  minDelayTicks: TICKS_PER_SNAPSHOT + 1,
  /** How fast the delay may change: playback runs at most 1.7 % fast or slow. */
  delaySlewTicksPerSec: 1,
  /** Longest extrapolation past the newest snapshot, across a stall (250 ms). */
  maxExtrapolateTicks: ticks(0.25),
  /** Time constant of blending what is drawn back onto the target. */
  blendTimeMs: 120,
  /** Most the blend moves a ship on top of its own motion: 8 px per frame at 60 Hz. */
  maxBlendPxPerSec: 480,
  /** A gap this large is a teleport, not an error: snap. */
  snapPx: 200,
  /** A ship not drawn for this long starts afresh. */
  forgetAfterMs: 1000,
  /**
   * Where a ship was drawn counts as where it is drawn for this long (a few frames): an
   * ally's shot starts there (`RemoteView.lastShown`).
   */
  shownFreshMs: 100,
} as const;
/**
 * The bounded rewind: the server judges contact damage and player shots against
 * enemies by what that player saw (docs/NETCODE.md "Timelines"), but never by a
 * picture older than this. A client whose picture is older is judged by one this old.
 */
export const MAX_REWIND_TICKS = ticks(0.25);
/** Extra lead of the client's input clock over its RTT estimate, in ticks. */
export const INPUT_LEAD_MARGIN_TICKS = 2;
/**
 * Adaptive input lead: frames the server had to coast past (a snapshot's ack behind its
 * tick) raise the lead by what was missing, and the raise fades slowly, so the next
 * stall of the upward path costs nothing (net/client/input_clock.ts).
 */
export const LATE_INPUT = {
  /** Ticks asked for on top of the lateness seen, for what a sample every 3 ticks misses. */
  marginTicks: 2,
  /**
   * Most extra ticks of lead (200 ms). Lead is not free: enemies are drawn that much
   * further past their snapshot, and beyond MAX_REWIND_TICKS the server judges by a
   * fresher picture than the one drawn. Measured with `deno task fairness`: 12 keeps
   * corrections ≤ 2/min at 150 ± 50 ms with stalls and contact as drawn; 24 did not.
   */
  maxTicks: 12,
  /** How fast the raise fades once frames are on time again: a tick every 25 s. */
  fadeTicksPerSec: 0.04,
} as const;
/**
 * Lead without lateness: the server reports how early the frames that made their tick
 * arrived (a snapshot's slack), and a lead that kept more than `keepTicks` of it on
 * every frame for a whole window, none late, comes down by the excess
 * (net/client/input_clock.ts). The round trip's half and spread are only an estimate of
 * the way up: on a link whose way down is the slower or the more jittery one, the lead
 * they ask for is more than the frames need, and every tick of it is felt (enemies
 * drawn that much further past their snapshot, a telegraph's warning that much
 * shorter). A raise for frames the link made late is not trimmed (it is cover for the
 * next stall, and fades at LATE_INPUT's pace); one for frames named while the clock
 * was settling in an instance is. Measured with `deno task fairness` (docs/NETCODE.md).
 */
export const LEAD_TRIM = {
  /**
   * How long the slack is watched before each step down: the lead comes to the most any
   * of the window's frames needed. A link that stalls for the first time after such a
   * step finds its lead trimmed and pays one burst of late frames (in one of twelve runs
   * measured at 150 ± 50 ms with a stall a minute, 11 corrections within 0.7 s); the raise
   * that follows covers it from then on.
   */
  windowMs: 30_000,
  /** Slack left on the least early frame of a window, in ticks. */
  keepTicks: 2,
  /**
   * Each time a trimmed lead still made a frame late, later trims leave a tick more
   * (the window had not seen all the link does), up to this.
   */
  maxKeepTicks: 6,
} as const;

/**
 * How fast the client's clock (the server's estimated tick plus the input lead) may
 * move against real time, in ticks per second: the prediction then runs up to 10 %
 * fast (or 3 % slow) rather than freezing or leaping. A gap over `snapTicks` is closed
 * at once (a page that was frozen), and any gap in the first `warmUpMs` in an instance.
 */
export const LEAD_SLEW = { raisePerSec: 6, lowerPerSec: 2, snapTicks: 30, warmUpMs: 1000 } as const;

/**
 * Over datagrams, once the client says it lacks a snapshot, each snapshot is sent twice
 * (a tick apart) for `holdMs` after the last loss seen. While both copies go, only a
 * loss of both shows (at 5 % loss, one snapshot in 400, every ~20 s), so the hold is
 * long enough that copies rarely lapse on a lossy link (about once in 400 holds at 5 %);
 * a clean link never starts it. `forgetMs`: snapshots no acknowledgement has described
 * by then are forgotten unjudged (a stalled client).
 */
export const SNAPSHOT_REPEAT = { forgetMs: 2_000, holdMs: 120_000 } as const;

/** WebTransport: certificates made here, and how long the client waits before WebSocket. */
export const WEBTRANSPORT = {
  /** Browsers trust a certificate by hash for at most 14 days, back-dating included. */
  certValidityDays: 13,
  /** A fresh certificate (or a fresh read of TLS_CERT/TLS_KEY) this often. */
  certRotateMs: 24 * 3_600_000,
  /** The client gives WebTransport this long to open before falling back to WebSocket. */
  fallbackAfterMs: 1000,
} as const;

/** Abuse limits and their defaults (main.ts may override from the environment). */
export const LIMITS = {
  maxClientFrameBytes: 256,
  /** The hello alone may be longer: it can carry a transfer ticket. */
  maxHelloBytes: 512,
  maxNameLength: 16,
  handshakeTimeoutMs: 5000,
  /** Messages per second a connection may send, averaged over a burst window. */
  maxMessagesPerSec: 120,
  maxBytesPerSec: 8192,
  burstSeconds: 2,
  maxConnectionsPerIp: 8,
  maxConnections: 200,
  maxPlayersPerDungeon: 4,
  /** Players one hub takes; more open another hub (on any process of a cluster). */
  hubCapacity: 200,
  /** New game connections one address may open at once, then per second sustained. */
  connectBurstPerIp: 20,
  connectsPerSecPerIp: 2,
  /** A player who has said hello and then sends nothing for this long is closed (4013). */
  idleTimeoutMs: 15_000,
  /** Bytes waiting to leave for one client; past this it is not reading and is closed (4014). */
  maxQueuedBytes: 256 * 1024,
  /** Highest player id: the wire's u16 (tests shrink the space to wrap it quickly). */
  maxPlayerId: 0xffff,
  /** A ship whose link dropped waits this long for its player to resume, parked. */
  resumeGraceMs: 15_000,
  /** A resume token is good this long; a connected player gets a fresh one at half of it. */
  resumeTokenTtlMs: 10 * 60_000,
} as const;

/**
 * The front door's limits (net/server/front_door.ts): TCP connections, request heads,
 * and the WebSocket frame rules enforced before a payload is read.
 */
export const DOOR_LIMITS = {
  /** TCP connections from one address (HTTP and WebSocket alike); off behind a proxy. */
  maxConnectionsPerIp: 32,
  maxConnections: 4096,
  /** A request head must be complete within this of its first byte. */
  headerTimeoutMs: 10_000,
  maxHeaderBytes: 16 * 1024,
  maxBodyBytes: 16 * 1024,
  /** An HTTP connection (not upgraded) quiet both ways for this long is closed. */
  idleMs: 30_000,
  /** A write to a client that has not finished in this long ends its connection. */
  writeStallMs: 10_000,
  /** Ping, pong and close frames per second, sustained, and at once. */
  controlPerSec: 10,
  controlBurst: 20,
} as const;

/** Ticks of tick durations kept for the recent p50/p99 (10 s). */
export const TICK_WINDOW_TICKS = 600;

/** How processes of a cluster keep the shared registry current. */
export const CLUSTER_TIMING = {
  /** A process renews its records this often. */
  heartbeatMs: 1000,
  /** Records not renewed for this long are gone: a dead process vanishes within it. */
  heartbeatTtlMs: 5000,
  /** A transfer ticket is good for this long after it is signed. */
  ticketTtlMs: 10_000,
  /** A party holds its seats while its members travel, this long at most. */
  partyTtlMs: 15_000,
  /** Mean tick time that counts as a full process when placing new instances. */
  tickBudgetMs: 8,
  /** Mean tick time below this is not load worth comparing processes by. */
  tickQuietMs: 1,
} as const;

/** BOSS_RUSH (load tests): how long a new dungeon waits, filling up, before the boss appears. */
export const BOSS_RUSH_DELAY_TICKS = ticks(3);

/**
 * A player shot that vanishes on an enemy as drawn is felt at once (the enemy flashes,
 * the hit sounds); the server's hit on that enemy comes a lead, a batch and a trip later
 * (~0.5 s at 150 ± 50 ms, more on a link that stalls). A hit on the same enemy within
 * this long is that strike's, not a second one (net/client/strikes.ts).
 */
export const STRIKE_CLAIM_MS = 1500;
