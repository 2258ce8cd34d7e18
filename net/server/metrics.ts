/** Renders the server's counters as Prometheus text and a health summary. */
import { ClusterNode } from "./cluster.ts";
import { CLOSE_LABELS, type GameServer, REFUSAL_KINDS, TICK_MS_BUCKETS } from "./server.ts";
import type { DoorStats } from "./front_door.ts";
import { STALL_MS_BUCKETS } from "./scheduler.ts";
import { STALL_VERDICTS } from "./stall_watch.ts";

/** Adds `process="…"` to a sample's labels: scrapes through a load balancer stay apart. */
function withProcess(labels: string, process: string): string {
  const label = `process="${process.replace(/["\\\n]/g, "_")}"`;
  const brace = labels.indexOf("{");
  if (brace < 0) return `${labels}{${label}}`;
  return `${labels.slice(0, brace + 1)}${label},${labels.slice(brace + 1)}`;
}

/**
 * Prometheus text exposition (version 0.0.4) of everything the server counts, and the
 * front door's counts when it runs one.
 */
export function renderMetrics(server: GameServer, opts: { door?: DoorStats } = {}): string {
  const c = server.counters;
  const lines: string[] = [];
  const metric = (name: string, type: string, help: string, samples: [string, number][]) => {
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    for (const [labels, v] of samples) {
      lines.push(`${name}${withProcess(labels, server.processId)} ${v}`);
    }
  };
  const byKind = { hub: 0, dungeon: 0 };
  for (const i of server.instances.values()) byKind[i.kind]++;
  metric("bh_instances", "gauge", "Live instances by kind.", [
    ['{kind="hub"}', byKind.hub],
    ['{kind="dungeon"}', byKind.dungeon],
  ]);
  metric("bh_players", "gauge", "Players inside instances.", [["", server.playerCount]]);
  metric(
    "bh_players_away",
    "gauge",
    "Players whose link dropped, their ships parked until a resume or the grace ends.",
    [["", server.playersAway]],
  );
  metric("bh_draining", "gauge", "1 while the server drains before a restart, else 0.", [[
    "",
    server.draining ? 1 : 0,
  ]]);
  metric(
    "bh_runs_in_progress",
    "gauge",
    "Dungeons whose run has not ended and that still hold a player.",
    [["", server.runsInProgress]],
  );
  metric("bh_resumes_total", "counter", "Sessions taken back over a new connection.", [[
    "",
    c.resumes,
  ]]);
  metric(
    "bh_resume_refusals_total",
    "counter",
    "Resume tokens that did not take: the run was over (expired) or the token was no good.",
    [['{why="expired"}', c.resumeRefusals.expired], ['{why="refused"}', c.resumeRefusals.refused]],
  );
  metric("bh_connections", "gauge", "Open connections.", [["", server.connections.size]]);
  metric("bh_connections_opened_total", "counter", "Connections accepted.", [[
    "",
    c.connectionsOpened,
  ]]);
  metric("bh_instances_created_total", "counter", "Instances created.", [["", c.instancesCreated]]);
  metric("bh_instances_destroyed_total", "counter", "Instances destroyed.", [[
    "",
    c.instancesDestroyed,
  ]]);
  metric(
    "bh_instances_failed_total",
    "counter",
    "Instances closed because they threw (their players went to the hub).",
    [['{kind="hub"}', c.instancesFailed.hub], ['{kind="dungeon"}', c.instancesFailed.dungeon]],
  );
  const buckets: [string, number][] = TICK_MS_BUCKETS.map((b, i) => [
    `_bucket{le="${b / 1000}"}`,
    c.tickMsBuckets[i],
  ]);
  buckets.push(['_bucket{le="+Inf"}', c.tickMsCount]);
  buckets.push(["_sum", c.tickMsSum / 1000], ["_count", c.tickMsCount]);
  metric("bh_tick_duration_seconds", "histogram", "Time to step every instance once.", buckets);
  metric(
    "bh_tick_seconds_total",
    "counter",
    "The ticks' time by part: stepping hubs, stepping dungeons, flushing the connections.",
    [
      ['{part="hub"}', c.tickMsByPart.hub / 1000],
      ['{part="dungeon"}', c.tickMsByPart.dungeon / 1000],
      ['{part="flush"}', c.tickMsByPart.flush / 1000],
    ],
  );
  metric(
    "bh_bullet_ticks_total",
    "counter",
    "Bullets in flight after each tick, summed over ticks: divided by the ticks, the fights' load.",
    [["", c.bulletTicks]],
  );
  metric("bh_ticks_late_total", "counter", "Ticks that started over one tick late.", [[
    "",
    server.scheduler.stats.ticksLate,
  ]]);
  const stats = server.scheduler.stats;
  let stalls = 0;
  const stallBuckets: [string, number][] = STALL_MS_BUCKETS.map((b, i) => {
    stalls += stats.stallBuckets[i];
    return [`_bucket{le="${b / 1000}"}`, stalls];
  });
  stallBuckets.push(['_bucket{le="+Inf"}', stats.stalls]);
  stallBuckets.push(["_sum", stats.stallMsSum / 1000], ["_count", stats.stalls]);
  metric(
    "bh_loop_stalls_seconds",
    "histogram",
    "Stalls of the game loop (runs of late ticks), by the most any of their ticks started late.",
    stallBuckets,
  );
  metric(
    "bh_loop_stall_verdicts_total",
    "counter",
    "Stalls of the game loop by what its thread did before the first late tick: worked (ran at least half the time), preempted (lost its core), slept (its timer woke it late: on a VM, the host).",
    STALL_VERDICTS.map((v) => [`{verdict="${v}"}`, server.stallWatch.counts[v]]),
  );
  metric("bh_ticks_dropped_total", "counter", "Ticks skipped after falling behind.", [[
    "",
    server.scheduler.stats.ticksDropped,
  ]]);
  metric("bh_tick_errors_total", "counter", "Ticks whose step threw outside any instance.", [[
    "",
    server.scheduler.stats.stepErrors,
  ]]);
  metric("bh_bytes_in_total", "counter", "Bytes received from clients.", [["", c.bytesIn]]);
  metric("bh_bytes_out_total", "counter", "Bytes sent to clients.", [["", c.bytesOut]]);
  metric("bh_snapshots_skipped_total", "counter", "Snapshots skipped on a backed-up socket.", [[
    "",
    c.snapshotsSkipped,
  ]]);
  metric(
    "bh_input_frames_total",
    "counter",
    "Input frames by audit verdict (all but queued are drops; replay includes redundant copies).",
    Object.entries(c.inputVerdicts).map(([k, v]) => [`{verdict="${k}"}`, v]),
  );
  metric(
    "bh_connections_closed_total",
    "counter",
    'Connections closed, by close code (a fixed set; codes a client picks are "other").',
    CLOSE_LABELS.map((k) => [`{code="${k}"}`, c.closes[k] ?? 0]),
  );
  metric(
    "bh_connections_refused_total",
    "counter",
    "Connections refused before the upgrade, by reason.",
    REFUSAL_KINDS.map((k) => [`{reason="${k}"}`, c.refusals[k]]),
  );
  metric(
    "bh_tick_recent_seconds",
    "gauge",
    "Tick duration over the last 10 s, by quantile (the load a cluster process reports).",
    [
      ['{quantile="0.5"}', server.tickWindow.quantile(0.5) / 1000],
      ['{quantile="0.99"}', server.tickWindow.quantile(0.99) / 1000],
    ],
  );
  metric(
    "bh_transfers_total",
    "counter",
    "Players sent to (out) or admitted from (in) other processes.",
    [
      ['{direction="out"}', c.transfersOut],
      ['{direction="in"}', c.transfersIn],
    ],
  );
  metric("bh_portal_refusals_total", "counter", "Portal entries that could not be placed.", [[
    "",
    c.portalRefusals,
  ]]);
  // Always exposed (0 without REGISTRY_URL), so dashboards and alerts need no special case.
  const cluster = server.placer instanceof ClusterNode ? server.placer.stats : undefined;
  metric("bh_registry_up", "gauge", "1 while the last registry call succeeded; 0 without one.", [[
    "",
    cluster?.registryUp ? 1 : 0,
  ]]);
  metric("bh_registry_errors_total", "counter", "Registry calls that failed.", [[
    "",
    cluster?.registryErrors ?? 0,
  ]]);
  metric("bh_tickets_refused_total", "counter", "Hellos refused for a bad transfer ticket.", [[
    "",
    cluster?.ticketsRefused ?? 0,
  ]]);
  metric(
    "bh_resumes_forwarded_total",
    "counter",
    "Resumes handed over to the process that holds the session.",
    [["", cluster?.resumesForwarded ?? 0]],
  );
  const door = opts.door;
  if (door) {
    metric("bh_door_connections", "gauge", "TCP connections open at the front door.", [[
      "",
      door.open,
    ]]);
    metric("bh_door_accepted_total", "counter", "TCP connections the front door accepted.", [[
      "",
      door.accepted,
    ]]);
    metric(
      "bh_door_refused_total",
      "counter",
      "Answered by the front door itself: too many connections from one address, the server " +
        "full, or a request head or body breaking a rule.",
      [
        ['{why="per_address"}', door.refusedPerAddress],
        ['{why="full"}', door.refusedFull],
        ['{why="request"}', door.refusedRequests],
      ],
    );
    metric(
      "bh_door_cutoffs_total",
      "counter",
      "Connections the front door ended: a head not finished in time (slowloris), an idle " +
        "HTTP connection, a WebSocket frame breaking a rule, a client not reading.",
      [
        ['{why="header_timeout"}', door.headerTimeouts],
        ['{why="idle"}', door.idleCloses],
        ['{why="frame"}', door.frameCloses],
        ['{why="write_stall"}', door.writeStalls],
      ],
    );
    metric("bh_door_backend_errors_total", "counter", "Relays to Deno.serve that failed.", [[
      "",
      door.backendErrors,
    ]]);
  }
  return lines.join("\n") + "\n";
}

/** Liveness: healthy while the tick loop has run within the last half second. */
export function health(server: GameServer): { ok: boolean; [k: string]: unknown } {
  const ageMs = server.tickAgeMs();
  return {
    // Draining answers 503 so a load balancer sends new players elsewhere.
    ok: server.scheduler.running && ageMs < 500 && !server.draining,
    draining: server.draining,
    runsInProgress: server.runsInProgress,
    tickAgeMs: Math.round(ageMs),
    ticks: server.scheduler.stats.ticks,
    ticksLate: server.scheduler.stats.ticksLate,
    instances: server.instances.size,
    instancesFailed: server.counters.instancesFailed.hub + server.counters.instancesFailed.dungeon,
    players: server.playerCount,
    connections: server.connections.size,
    accepting: server.accepting,
    process: server.processId,
    // Healthy either way: a registry outage blocks new placements, never the running game.
    registry: server.placer instanceof ClusterNode
      ? (server.placer.stats.registryUp ? "up" : "down")
      : "none",
  };
}
