/**
 * The Hono app in process through `app.request()` (no port): /healthz and
 * /metrics as deploy/README.md (e) documents them, the origin check in front of
 * /ws, and originAllowed() on its own. The game server runs on a ManualClock.
 */
import assert from "node:assert/strict";
import { loadConfig } from "../../net/server/config.ts";
import { CloseCode } from "../../net/wire/protocol.ts";
import { type Clock, ManualClock } from "../../net/server/scheduler.ts";
import { GameServer, type ServerOptions } from "../../net/server/server.ts";
import type { DoorStats } from "../../net/server/front_door.ts";
import { createApp, hostAllowed, originAllowed } from "../../routes/app.ts";
import { DriftingClock, RawClient } from "../net/_harness.ts";

const CLIENT_JS = "console.log('client');";

/** What Deno.serve passes the app as its env: getConnInfo() reads the peer from it. */
const SERVE_INFO = { remoteAddr: { hostname: "10.0.0.9", port: 50000, transport: "tcp" } };

/** A game server on a ManualClock, its loop started, behind the app. */
function setup(
  opts: {
    allowedOrigins?: readonly string[];
    allowedHosts?: readonly string[];
    limits?: ServerOptions["limits"];
    log?: ServerOptions["log"];
    doorStats?: () => DoorStats | undefined;
  } = {},
) {
  const clock = new ManualClock();
  const server = new GameServer({ clock, seed: 1, limits: opts.limits, log: opts.log });
  server.start();
  const app = createApp(server, {
    clientJs: () => Promise.resolve(CLIENT_JS),
    allowedOrigins: opts.allowedOrigins,
    allowedHosts: opts.allowedHosts,
    doorStats: opts.doorStats,
  });
  return { clock, server, app };
}

// ---------------------------------------------------------------- /healthz

const HEALTH_KEYS = [
  "accepting",
  "connections",
  "draining",
  "instances",
  "instancesFailed",
  "ok",
  "players",
  "process",
  "registry",
  "runsInProgress",
  "tickAgeMs",
  "ticks",
  "ticksLate",
];

Deno.test("GET /healthz is 200 with ok true while the loop ticks", async () => {
  const { clock, server, app } = setup();
  clock.advance(1000);
  const player = new RawClient(server, "10.0.0.1");
  player.hello("Healthy");

  const res = await app.request("/healthz");
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
  const body = await res.json();
  assert.deepEqual(Object.keys(body).sort(), HEALTH_KEYS);
  assert.equal(body.ok, true);
  assert.ok(body.ticks >= 59 && body.ticks <= 60, `${body.ticks} ticks in 1 s`);
  assert.ok(body.tickAgeMs >= 0 && body.tickAgeMs < 20, `tick age ${body.tickAgeMs} ms`);
  assert.equal(body.ticksLate, 0);
  assert.equal(body.instances, 1);
  assert.equal(body.players, 1);
  assert.equal(body.connections, 1);
  assert.equal(body.accepting, true);
  assert.equal(body.process, "single");
  assert.equal(body.registry, "none", "one process, no registry");
  assert.equal(body.draining, false);
  assert.equal(body.runsInProgress, 0);
  server.shutdown("test over");
});

Deno.test("GET /healthz is 503 with draining true while the server drains, the loop still ticking", async () => {
  const { clock, server, app } = setup();
  clock.advance(200);
  server.drain();
  clock.advance(200);
  const res = await app.request("/healthz");
  assert.equal(res.status, 503, "a load balancer sends new players elsewhere");
  const body = await res.json();
  assert.deepEqual([body.ok, body.draining, body.accepting], [false, true, true]);
  assert.ok(body.tickAgeMs < 20, "the game goes on");
  server.shutdown("test over");
});

Deno.test("GET /healthz is 503 with ok false after shutdown", async () => {
  const { clock, server, app } = setup();
  clock.advance(200);
  server.shutdown("server restarting");
  const res = await app.request("/healthz");
  assert.equal(res.status, 503);
  const body = await res.json();
  assert.equal(body.ok, false);
  assert.equal(body.accepting, false);
  assert.equal(clock.pending, 0, "the loop is stopped");
});

/** Time set by hand, and timers that never fire: a tick loop that has stalled. */
class StalledClock implements Clock {
  nowMs = 0;
  now(): number {
    return this.nowMs;
  }
  setTimer(): number {
    return 1;
  }
  clearTimer(): void {}
}

Deno.test("GET /healthz turns 503 once the last tick is 500 ms old", async () => {
  const clock = new StalledClock();
  const server = new GameServer({ clock, seed: 1 });
  server.start();
  const app = createApp(server, { clientJs: () => Promise.resolve("") });
  clock.nowMs = 1000;
  server.tick(); // the loop's last tick before it stalled

  clock.nowMs = 1499;
  assert.equal((await app.request("/healthz")).status, 200);
  clock.nowMs = 1500;
  const res = await app.request("/healthz");
  assert.equal(res.status, 503);
  const body = await res.json();
  assert.equal(body.ok, false);
  assert.equal(body.tickAgeMs, 500);
  assert.equal(body.accepting, true, "still accepting: only the loop is unhealthy");
  server.shutdown("test over");
});

// ---------------------------------------------------------------- /metrics

interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

interface Family {
  readonly help: string;
  readonly type: string;
  readonly samples: Sample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const SAMPLE_LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\["\\n])*)"$/;

function parseValue(raw: string, line: string): number {
  if (raw === "+Inf") return Infinity;
  if (raw === "-Inf") return -Infinity;
  if (raw === "NaN") return NaN;
  assert.match(raw, /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/, `a number in: ${line}`);
  return Number(raw);
}

/**
 * Parses Prometheus text format 0.0.4 strictly enough to catch a broken
 * exposition: one HELP and one TYPE per family before its samples, samples named
 * after the family just declared, well-formed labels, numeric values, no duplicates.
 */
function parsePrometheus(text: string): Map<string, Family> {
  assert.ok(text.endsWith("\n"), "the exposition ends with a newline");
  const families = new Map<string, Family>();
  const seen = new Set<string>();
  let current: { name: string; family: Family } | undefined;
  for (const line of text.slice(0, -1).split("\n")) {
    const meta = /^# (HELP|TYPE) (\S+) (.*)$/.exec(line);
    if (meta) {
      const [, what, name, rest] = meta;
      assert.match(name, METRIC_NAME);
      if (what === "HELP") {
        assert.ok(!families.has(name), `one HELP for ${name}`);
        assert.ok(rest.trim().length > 0, `${name} has help text`);
        current = { name, family: { help: rest, type: "", samples: [] } };
        families.set(name, current.family);
      } else {
        assert.equal(current?.name, name, `TYPE ${name} follows its HELP`);
        assert.equal(current.family.type, "", `one TYPE for ${name}`);
        assert.ok(["counter", "gauge", "histogram", "summary", "untyped"].includes(rest), rest);
        (current.family as { type: string }).type = rest;
      }
      continue;
    }
    assert.ok(!line.startsWith("#"), `no stray comments: ${line}`);
    const m = SAMPLE_LINE.exec(line);
    assert.ok(m, `a sample line: ${JSON.stringify(line)}`);
    const [, name, rawLabels, rawValue] = m;
    assert.ok(current && current.family.type !== "", `${name} comes after its HELP and TYPE`);
    const suffixes = current.family.type === "histogram" ? ["_bucket", "_sum", "_count"] : [""];
    assert.ok(
      suffixes.some((s) => name === current!.name + s),
      `${name} belongs to ${current.name}`,
    );
    const labels: Record<string, string> = {};
    for (const pair of rawLabels ? rawLabels.split(",") : []) {
      const l = LABEL.exec(pair);
      assert.ok(l, `a label: ${pair} in ${line}`);
      assert.ok(!(l[1] in labels), `label ${l[1]} once`);
      labels[l[1]] = l[2];
    }
    const key = `${name}{${rawLabels ?? ""}}`;
    assert.ok(!seen.has(key), `one sample ${key}`);
    seen.add(key);
    current.family.samples.push({ name, labels, value: parseValue(rawValue, line) });
  }
  return families;
}

/** The value of the one sample of `family` named `name` with exactly `labels`. */
function valueOf(
  families: Map<string, Family>,
  family: string,
  labels: Record<string, string> = {},
  name = family,
): number {
  const f = families.get(family);
  assert.ok(f, `family ${family}`);
  // Every sample also carries the process label (checked on its own below).
  const matches = f.samples.filter((s) => {
    const { process: _process, ...rest } = s.labels;
    return s.name === name && JSON.stringify(rest) === JSON.stringify(labels);
  });
  assert.equal(matches.length, 1, `one ${name}${JSON.stringify(labels)}`);
  return matches[0].value;
}

/** The buckets are cumulative, end in +Inf, and +Inf equals _count. */
function assertHistogram(families: Map<string, Family>, name: string): Sample[] {
  const f = families.get(name);
  assert.ok(f && f.type === "histogram", `${name} is a histogram`);
  const buckets = f.samples.filter((s) => s.name === `${name}_bucket`);
  assert.ok(buckets.length >= 2, "some buckets");
  const bounds = buckets.map((b) => parseValue(b.labels.le, `le of ${name}`));
  assert.equal(bounds.at(-1), Infinity, "the last bucket is +Inf");
  for (let i = 1; i < buckets.length; i++) {
    assert.ok(bounds[i] > bounds[i - 1], `bounds rise: ${bounds[i - 1]} < ${bounds[i]}`);
    assert.ok(buckets[i].value >= buckets[i - 1].value, `cumulative at le=${bounds[i]}`);
  }
  const count = valueOf(families, name, {}, `${name}_count`);
  const sum = valueOf(families, name, {}, `${name}_sum`);
  assert.equal(buckets.at(-1)!.value, count, "+Inf bucket = _count");
  assert.ok(sum >= 0 && Number.isFinite(sum));
  return buckets;
}

/** Metric families and their types, read from the table in deploy/README.md (e). */
async function documentedFamilies(): Promise<Map<string, string>> {
  const readme = await Deno.readTextFile(new URL("../../deploy/README.md", import.meta.url));
  const start = readme.indexOf("## (e) Metrics");
  assert.ok(start >= 0, "deploy/README.md has section (e)");
  const section = readme.slice(start, readme.indexOf("`/healthz`", start));
  const out = new Map<string, string>();
  for (const row of section.split("\n").filter((l) => l.startsWith("| `bh_"))) {
    const [, names, type] = row.split(/(?<!\\)\|/).map((c) => c.trim());
    for (const [, name] of names.matchAll(/`(bh_[a-z_]+)/g)) out.set(name, type);
  }
  return out;
}

async function metricsOf(app: ReturnType<typeof createApp>): Promise<Map<string, Family>> {
  const res = await app.request("/metrics");
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/);
  return parsePrometheus(await res.text());
}

Deno.test("GET /metrics has every family in deploy/README.md (e), in valid Prometheus text", async () => {
  const documented = await documentedFamilies();
  assert.equal(documented.size, 38, `README lists ${[...documented.keys()].join(", ")}`);
  // As main.ts runs it: behind the front door, whose counts /metrics shows too.
  const door: DoorStats = {
    accepted: 7,
    open: 2,
    refusedPerAddress: 3,
    refusedFull: 0,
    refusedRequests: 1,
    headerTimeouts: 4,
    idleCloses: 0,
    frameCloses: 5,
    writeStalls: 0,
    backendErrors: 0,
  };
  const { clock, server, app } = setup({ doorStats: () => door });
  const player = new RawClient(server, "10.0.0.1");
  player.hello("Counted");
  const offender = new RawClient(server, "10.0.0.2");
  offender.send(new Uint8Array([0xff]));
  await app.request("/ws", { headers: { origin: "https://evil.example", host: "127.0.0.1" } });
  clock.advance(1000);

  const families = await metricsOf(app);
  for (const [name, type] of documented) {
    assert.ok(families.has(name), `${name} is exposed`);
    assert.equal(families.get(name)!.type, type, `${name} is a ${type}`);
  }
  for (const name of families.keys()) assert.ok(documented.has(name), `${name} is documented`);
  for (const f of families.values()) {
    for (const s of f.samples) {
      assert.equal(s.labels.process, "single", `${s.name} names its process`);
    }
  }

  assert.equal(valueOf(families, "bh_door_connections"), 2);
  assert.equal(valueOf(families, "bh_door_refused_total", { why: "per_address" }), 3);
  assert.equal(valueOf(families, "bh_door_cutoffs_total", { why: "header_timeout" }), 4);
  assert.equal(valueOf(families, "bh_door_cutoffs_total", { why: "frame" }), 5);
  assert.equal(valueOf(families, "bh_instances", { kind: "hub" }), 1);
  assert.equal(valueOf(families, "bh_instances", { kind: "dungeon" }), 0);
  assert.equal(valueOf(families, "bh_players"), 1);
  assert.equal(valueOf(families, "bh_connections"), 1);
  assert.equal(valueOf(families, "bh_connections_opened_total"), 2);
  assert.equal(valueOf(families, "bh_instances_created_total"), 1, "the hub");
  assert.equal(valueOf(families, "bh_instances_destroyed_total"), 0);
  assert.equal(valueOf(families, "bh_connections_closed_total", { code: "4000" }), 1);
  assert.equal(valueOf(families, "bh_connections_closed_total", { code: "4007" }), 0);
  assert.equal(valueOf(families, "bh_connections_refused_total", { reason: "origin" }), 1);
  for (const reason of ["host", "bad_upgrade", "draining", "full", "per_address", "rate"]) {
    assert.equal(valueOf(families, "bh_connections_refused_total", { reason }), 0, reason);
  }
  assert.equal(valueOf(families, "bh_connections_closed_total", { code: "other" }), 0);
  assert.ok(valueOf(families, "bh_bytes_in_total") > 0);
  assert.ok(valueOf(families, "bh_bytes_out_total") > 0);
  assert.equal(valueOf(families, "bh_snapshots_skipped_total"), 0);
  assert.equal(valueOf(families, "bh_ticks_late_total"), 0);
  assert.equal(valueOf(families, "bh_ticks_dropped_total"), 0);
  const stalls = assertHistogram(families, "bh_loop_stalls_seconds");
  assert.equal(stalls.length, 7, "six bounds from 25 ms to 1 s, and +Inf");
  assert.equal(parseValue(stalls[0].labels.le, "le"), 0.025);
  for (const verdict of ["queued", "replay", "stale", "future", "flood", "invalid"]) {
    assert.equal(valueOf(families, "bh_input_frames_total", { verdict }), 0, verdict);
  }
  const buckets = assertHistogram(families, "bh_tick_duration_seconds");
  assert.equal(buckets.length, 10, "nine bounds from 50 µs to 16 ms, and +Inf");
  assert.equal(parseValue(buckets[0].labels.le, "le"), 0.00005);
  assert.equal(parseValue(buckets[8].labels.le, "le"), 0.016);
  assert.equal(
    valueOf(families, "bh_tick_duration_seconds", {}, "bh_tick_duration_seconds_count"),
    server.scheduler.stats.ticks,
  );
  server.shutdown("test over");
});

Deno.test("the tick duration histogram stays cumulative with ticks across many buckets", async () => {
  const server = new GameServer({ clock: new DriftingClock(), seed: 1 });
  const app = createApp(server, { clientJs: () => Promise.resolve("") });
  const ticks = 97;
  for (let i = 0; i < ticks; i++) server.tick();
  const families = await metricsOf(app);
  const buckets = assertHistogram(families, "bh_tick_duration_seconds");
  const distinct = new Set(buckets.map((b) => b.value));
  assert.ok(distinct.size >= 4, `ticks spread over buckets: ${[...distinct].join(", ")}`);
  assert.ok(buckets[0].value < ticks, "not everything in the first bucket");
  assert.equal(buckets.at(-1)!.value, ticks);
  const sum = valueOf(families, "bh_tick_duration_seconds", {}, "bh_tick_duration_seconds_sum");
  assert.ok(sum > 0, `sum ${sum} s`);
  // Where that time went: the hub's steps and the flushes after them, no dungeon yet; the
  // parts add up to the whole.
  const part = (name: string) => valueOf(families, "bh_tick_seconds_total", { part: name });
  assert.ok(part("hub") > 0, `hub ${part("hub")} s`);
  assert.ok(part("flush") > 0, `flush ${part("flush")} s`);
  assert.equal(part("dungeon"), 0);
  assert.ok(
    Math.abs(part("hub") + part("dungeon") + part("flush") - sum) < 1e-9,
    `${part("hub")} + ${part("dungeon")} + ${part("flush")} = ${sum}`,
  );
});

// ---------------------------------------------------------------- /ws origin check

/** Headers of a browser's WebSocket handshake from `origin` to `host`. */
function wsHeaders(origin: string | undefined, host: string): Record<string, string> {
  return {
    ...(origin === undefined ? {} : { origin }),
    host,
    upgrade: "websocket",
    connection: "Upgrade",
    "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
    "sec-websocket-version": "13",
  };
}

Deno.test("/ws from a foreign origin gets 403 before any upgrade and is counted as refused", async () => {
  const { server, app } = setup();
  for (const origin of ["https://evil.example", "null", "https://127.0.0.1.evil.net"]) {
    const res = await app.request(
      "http://127.0.0.1:8000/ws",
      { headers: wsHeaders(origin, "127.0.0.1:8000") },
      SERVE_INFO,
    );
    assert.equal(res.status, 403, origin);
    assert.deepEqual(await res.json(), {
      code: CloseCode.OriginRefused,
      reason: "origin not allowed",
    });
  }
  assert.equal(server.connections.size, 0);
  assert.equal(server.counters.connectionsOpened, 0);
  const families = await metricsOf(app);
  assert.equal(valueOf(families, "bh_connections_refused_total", { reason: "origin" }), 3);
  server.shutdown("test over");
});

Deno.test("/ws from the same host, an allow-listed origin or no origin is not refused", async () => {
  const config = loadConfig({
    PUBLIC_ORIGIN: "https://game.example.com",
    ALLOWED_ORIGINS: "https://friend.example",
  });
  const { server, app } = setup({ allowedOrigins: config.allowedOrigins });
  const cases: [what: string, origin: string | undefined, host: string][] = [
    ["same host", "http://127.0.0.1:8000", "127.0.0.1:8000"],
    ["same host behind a proxy that keeps Host", "https://game.example.com", "game.example.com"],
    [
      "PUBLIC_ORIGIN behind a proxy that rewrites Host",
      "https://game.example.com",
      "127.0.0.1:8000",
    ],
    ["ALLOWED_ORIGINS", "https://friend.example", "127.0.0.1:8000"],
    ["no Origin (a bot)", undefined, "127.0.0.1:8000"],
  ];
  for (const [what, origin, host] of cases) {
    // In process the upgrade gets as far as Deno's 101 answer; no socket ever opens.
    const upgrade = await app.request(
      `http://${host}/ws`,
      { headers: wsHeaders(origin, host) },
      SERVE_INFO,
    );
    assert.notEqual(upgrade.status, 403, what);
    assert.equal(upgrade.status, 101, `${what}: the upgrade goes ahead`);
    // Without the upgrade headers the route falls through: still no 403.
    const plain = await app.request(
      `http://${host}/ws`,
      { headers: origin === undefined ? { host } : { origin, host } },
      SERVE_INFO,
    );
    assert.notEqual(plain.status, 403, `${what}, plain GET`);
  }
  assert.equal(server.counters.refusals.origin, 0);
  server.shutdown("test over");
});

Deno.test("originAllowed() allows no origin, listed origins and the request's own host only", () => {
  const allowed = ["https://game.example.com", "http://localhost:5173"];
  const cases: [origin: string | undefined, host: string | undefined, ok: boolean][] = [
    [undefined, "game.example.com", true],
    [undefined, undefined, true],
    ["https://game.example.com", "127.0.0.1:8000", true],
    ["http://localhost:5173", "127.0.0.1:8000", true],
    ["http://localhost:8000", "localhost:8000", true],
    ["https://play.example.org", "play.example.org", true],
    // Same host, other scheme: the rule compares hosts only.
    ["http://play.example.org", "play.example.org", true],
    ["http://localhost:5174", "localhost:8000", false],
    ["http://localhost:8000", "localhost:8001", false],
    ["https://evil.example", "game.example.com", false],
    ["https://evil.game.example.com", "game.example.com", false],
    ["https://game.example.com.evil.net", "game.example.com", false],
    ["https://game.example.com:8443", "127.0.0.1:8000", false],
    ["null", "game.example.com", false],
    ["not a url", "game.example.com", false],
    ["", "game.example.com", false],
    ["https://evil.example", undefined, false],
  ];
  for (const [origin, host, ok] of cases) {
    assert.equal(originAllowed(origin, { host, allowed }), ok, `${origin} on ${host}`);
  }
});

// ---------------------------------------------------------------- page and bundle

Deno.test("GET / serves the page and GET /client.js the bundle", async () => {
  const { server, app } = setup();
  const page = await app.request("/");
  assert.equal(page.status, 200);
  assert.match(await page.text(), /<script type="module" src="\/client\.js"><\/script>/);
  const js = await app.request("/client.js");
  assert.equal(js.status, 200);
  assert.match(js.headers.get("content-type") ?? "", /^text\/javascript/);
  assert.equal(await js.text(), CLIENT_JS);
  server.shutdown("test over");
});

Deno.test("the page names an SVG favicon, and /favicon.ico answers 200 with it too", async () => {
  const { server, app } = setup();
  try {
    const page = await (await app.request("/")).text();
    assert.match(page, /<link rel="icon" type="image\/svg\+xml" href="\/favicon.svg">/);
    for (const path of ["/favicon.svg", "/favicon.ico"]) {
      const res = await app.request(path);
      assert.equal(res.status, 200, path);
      assert.equal(res.headers.get("content-type"), "image/svg+xml");
      assert.match(await res.text(), /^<svg[^>]*viewBox="0 0 64 64"/);
    }
  } finally {
    server.shutdown("test over");
  }
});

// ---------------------------------------------------------------- hosts and headers

Deno.test("a Host the server does not know gets 421 (DNS rebinding), even with a matching Origin", async () => {
  const { server, app } = setup({ allowedOrigins: ["https://game.example.com"] });
  for (const path of ["/", "/client.js", "/metrics", "/healthz", "/ws"]) {
    const res = await app.request(
      `http://evil.example${path}`,
      { headers: wsHeaders("http://evil.example", "evil.example") },
      SERVE_INFO,
    );
    assert.equal(res.status, 421, path);
    assert.match(await res.text(), /does not answer to evil\.example: set PUBLIC_ORIGIN/);
  }
  assert.equal(server.connections.size, 0);
  assert.equal(server.counters.refusals.host, 5);
  server.shutdown("test over");
});

Deno.test("hostAllowed() takes IP literals, localhost and the configured names only", () => {
  const hosts = new Set(["game.example.com"]);
  const cases: [host: string | undefined, ok: boolean][] = [
    [undefined, true],
    ["127.0.0.1:8000", true],
    ["203.0.113.9", true],
    ["[::1]:8000", true],
    ["localhost:8000", true],
    ["app.localhost", true],
    ["game.example.com", true],
    ["GAME.example.com:443", true],
    ["evil.example", false],
    ["game.example.com.evil.net", false],
    ["127.0.0.1.evil.net", false],
    ["", false],
    ["a b", false],
  ];
  for (const [host, ok] of cases) assert.equal(hostAllowed(host, hosts), ok, String(host));
});

Deno.test("every answer carries a strict CSP, nosniff, no referrer and no framing", async () => {
  const { server, app } = setup();
  for (const path of ["/", "/client.js", "/healthz", "/metrics", "/ws", "/nope"]) {
    const res = await app.request(`http://127.0.0.1:8000${path}`, {
      headers: { host: "127.0.0.1:8000" },
    }, SERVE_INFO);
    const h = res.headers;
    const policy = h.get("content-security-policy") ?? "";
    assert.match(policy, /default-src 'none'/, path);
    assert.match(policy, /script-src 'self'(;|$)/, path);
    assert.match(policy, /connect-src 'self' ws:\/\/127\.0\.0\.1:8000 wss:\/\/127\.0\.0\.1:8000/);
    assert.match(policy, /frame-ancestors 'none'/);
    assert.doesNotMatch(policy, /unsafe-eval/);
    assert.equal(h.get("x-content-type-options"), "nosniff", path);
    assert.equal(h.get("referrer-policy"), "no-referrer", path);
    assert.equal(h.get("x-frame-options"), "DENY", path);
    await res.body?.cancel();
  }
  server.shutdown("test over");
});

// ---------------------------------------------------------------- refusals before the upgrade

Deno.test("over the per-address cap, /ws answers 429 with a reason before any upgrade", async () => {
  const { server, app } = setup({ limits: { maxConnectionsPerIp: 2 } });
  const ws = () =>
    app.request(
      "http://127.0.0.1:8000/ws",
      { headers: wsHeaders(undefined, "127.0.0.1:8000") },
      SERVE_INFO,
    );
  assert.equal((await ws()).status, 101);
  assert.equal((await ws()).status, 101);
  const third = await ws();
  assert.equal(third.status, 429);
  assert.equal(third.headers.get("retry-after"), "5");
  assert.deepEqual(await third.json(), {
    code: CloseCode.TooManyFromIp,
    reason: "too many connections from your address",
  });
  assert.equal(server.connections.size, 2, "the refused one never became a connection");
  assert.equal(server.counters.refusals.per_address, 1);
  // A page whose socket failed asks why with a plain GET: the same answer, no budget spent.
  const why = await app.request(
    "http://127.0.0.1:8000/ws",
    { headers: { host: "127.0.0.1:8000" } },
    SERVE_INFO,
  );
  assert.equal(why.status, 429);
  assert.match((await why.json()).reason, /too many connections/);
  assert.equal(server.counters.refusals.per_address, 1, "asking is not an attempt");
  server.shutdown("test over");
});

Deno.test("a storm of upgrades from one address is refused 429 once its connect budget is spent", async () => {
  const { server, app } = setup({
    limits: { maxConnectionsPerIp: 1000, connectBurstPerIp: 5, connectsPerSecPerIp: 1 },
  });
  const statuses: number[] = [];
  for (let i = 0; i < 8; i++) {
    const res = await app.request(
      "http://127.0.0.1:8000/ws",
      { headers: wsHeaders(undefined, "127.0.0.1:8000") },
      SERVE_INFO,
    );
    statuses.push(res.status);
    if (res.status === 429) assert.match((await res.json()).reason, /connecting too often/);
  }
  assert.deepEqual(statuses, [101, 101, 101, 101, 101, 429, 429, 429]);
  assert.equal(server.counters.refusals.rate, 3);
  const plain = await app.request("http://127.0.0.1:8000/ws", {
    headers: { host: "127.0.0.1:8000" },
  }, SERVE_INFO);
  assert.equal(plain.status, 429);
  assert.ok(Number(plain.headers.get("retry-after")) >= 1);
  server.shutdown("test over");
});

Deno.test("a plain GET /ws with nothing in the way answers 426, and opens nothing", async () => {
  const { server, app } = setup();
  const res = await app.request(
    "http://127.0.0.1:8000/ws",
    { headers: { host: "127.0.0.1:8000" } },
    SERVE_INFO,
  );
  assert.equal(res.status, 426);
  assert.deepEqual(await res.json(), { code: 0, reason: "expected a WebSocket upgrade" });
  assert.equal(server.connections.size, 0);
  server.shutdown("test over");
});

Deno.test("an upgrade without a key is a 400 with a reason, logged as nothing worse", async () => {
  const logs: string[] = [];
  const { server, app } = setup({ log: (event) => logs.push(event) });
  const headers = wsHeaders(undefined, "127.0.0.1:8000");
  delete headers["sec-websocket-key"];
  const res = await app.request("http://127.0.0.1:8000/ws", { headers }, SERVE_INFO);
  assert.equal(res.status, 400);
  assert.match(await res.text(), /^bad WebSocket upgrade: /);
  assert.equal(server.connections.size, 0);
  assert.equal(server.counters.refusals.bad_upgrade, 1);
  assert.deepEqual(logs.filter((e) => e.endsWith("_error")), []);
  server.shutdown("test over");
});

Deno.test("while draining, /ws answers 503 with the restart reason", async () => {
  const { server, app } = setup();
  server.shutdown("server restarting");
  const res = await app.request(
    "http://127.0.0.1:8000/ws",
    { headers: wsHeaders(undefined, "127.0.0.1:8000") },
    SERVE_INFO,
  );
  assert.equal(res.status, 503);
  assert.equal((await res.json()).code, CloseCode.ServerRestarting);
  assert.equal(server.counters.refusals.draining, 1);
});
