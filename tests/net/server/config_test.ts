/**
 * loadConfig as deploy/README.md documents it: the defaults, valid overrides,
 * the shipped example environment file, and every bad value refused with a
 * message that names its variable (main.ts prints it and exits with status 2).
 */
import assert from "node:assert/strict";
import { DOOR_LIMITS, LIMITS } from "../../../content/net_tuning.ts";
import { loadConfig } from "../../../net/server/config.ts";

Deno.test("loadConfig() with an empty environment gives the documented defaults", () => {
  assert.deepEqual(loadConfig({}), {
    host: "127.0.0.1",
    port: 8000,
    webTransport: {
      enabled: true,
      host: "127.0.0.1",
      port: 8000,
      publicPort: undefined,
      certFile: undefined,
      keyFile: undefined,
    },
    publicOrigin: undefined,
    allowedOrigins: [],
    allowedHosts: [],
    trustProxy: false,
    logLevel: "info",
    dev: false,
    shutdownGraceMs: 3000,
    drainMs: 300_000,
    linkSim: undefined,
    door: { ...DOOR_LIMITS, maxMessageBytes: LIMITS.maxHelloBytes },
    nativeTcp: true,
    loopPriority: "realtime",
    tokenSecret: undefined,
    limits: {
      maxConnections: 200,
      maxConnectionsPerIp: 8,
      hubCapacity: 200,
      connectBurstPerIp: 20,
      connectsPerSecPerIp: 2,
    },
    processId: "single",
    bossRush: false,
    cluster: undefined,
  });
  assert.deepEqual(loadConfig({}).limits, {
    maxConnections: LIMITS.maxConnections,
    maxConnectionsPerIp: LIMITS.maxConnectionsPerIp,
    hubCapacity: LIMITS.hubCapacity,
    connectBurstPerIp: LIMITS.connectBurstPerIp,
    connectsPerSecPerIp: LIMITS.connectsPerSecPerIp,
  });
});

Deno.test("loadConfig() treats empty numeric variables as unset", () => {
  const config = loadConfig({ PORT: "", MAX_CONNECTIONS: "", HOST: "" });
  assert.equal(config.port, 8000);
  assert.equal(config.host, "127.0.0.1");
  assert.equal(config.limits.maxConnections, 200);
});

Deno.test("loadConfig() takes valid overrides and normalises origins", () => {
  const config = loadConfig({
    HOST: "0.0.0.0",
    PORT: "9001",
    PUBLIC_ORIGIN: "https://Game.Example.com/",
    ALLOWED_ORIGINS: " https://www.game.example.com , http://localhost:5173,, ",
    MAX_CONNECTIONS: "1000",
    MAX_CONNECTIONS_PER_IP: "1",
    CONNECT_BURST_PER_IP: "100",
    CONNECTS_PER_SEC_PER_IP: "50",
    ALLOWED_HOSTS: " Play.Example.org ,game-2.example.net",
    LOG_LEVEL: "debug",
    TRUST_PROXY: "1",
    SHUTDOWN_GRACE_MS: "500",
    DRAIN_SECONDS: "0",
    LINK_SIM: "150±50, stall=250/4000",
    WEBTRANSPORT_HOST: "203.0.113.7",
    WEBTRANSPORT_PORT: "9443",
    WEBTRANSPORT_PUBLIC_PORT: "443",
    TLS_CERT: "/etc/ssl/game.pem",
    TLS_KEY: "/etc/ssl/game.key",
  });
  assert.deepEqual(config, {
    host: "0.0.0.0",
    port: 9001,
    webTransport: {
      enabled: true,
      host: "203.0.113.7",
      port: 9443,
      publicPort: 443,
      certFile: "/etc/ssl/game.pem",
      keyFile: "/etc/ssl/game.key",
    },
    publicOrigin: "https://game.example.com",
    // PUBLIC_ORIGIN is allowed too, so the origin check needs one list.
    allowedOrigins: [
      "https://www.game.example.com",
      "http://localhost:5173",
      "https://game.example.com",
    ],
    allowedHosts: ["play.example.org", "game-2.example.net"],
    trustProxy: true,
    logLevel: "debug",
    dev: false,
    shutdownGraceMs: 500,
    drainMs: 0,
    linkSim: {
      up: { delayMs: 150, jitterMs: 50, stallMs: 250, stallEveryMs: 4000 },
      down: { delayMs: 150, jitterMs: 50, stallMs: 250, stallEveryMs: 4000 },
      seed: 1,
    },
    // Behind a proxy (TRUST_PROXY=1) the door does not cap per address: all is the proxy.
    door: { ...DOOR_LIMITS, maxConnectionsPerIp: 0, maxMessageBytes: LIMITS.maxHelloBytes },
    nativeTcp: true,
    loopPriority: "realtime",
    tokenSecret: undefined,
    limits: {
      maxConnections: 1000,
      maxConnectionsPerIp: 1,
      hubCapacity: 200,
      connectBurstPerIp: 100,
      connectsPerSecPerIp: 50,
    },
    processId: "single",
    bossRush: false,
    cluster: undefined,
  });
});

const SECRET_HEX = "ab".repeat(32);

Deno.test("loadConfig() reads a cluster process: registry, public URL, id, shared secret", () => {
  const config = loadConfig({
    REGISTRY_URL: "redis://10.0.0.5:6379",
    PUBLIC_URL: "https://game.example.com/p/1/",
    PROCESS_ID: "game-1",
    TOKEN_SECRET: SECRET_HEX,
    HUB_CAPACITY: "150",
  });
  assert.equal(config.processId, "game-1");
  assert.equal(config.limits.hubCapacity, 150);
  assert.equal(config.cluster?.registryUrl, "redis://10.0.0.5:6379");
  assert.equal(config.cluster?.publicUrl, "https://game.example.com/p/1");
  assert.equal(config.cluster?.hostsGames, true);
  const placer = loadConfig({ REGISTRY_URL: "kv:", HOSTS_GAMES: "0", TOKEN_SECRET: SECRET_HEX });
  assert.equal(placer.cluster?.hostsGames, false, "a placement-only process needs no PUBLIC_URL");
  assert.equal(placer.cluster?.publicUrl, "");
  assert.deepEqual(config.cluster?.tokenSecret, new Uint8Array(32).fill(0xab));
  for (const url of ["kv:", "kv:/var/lib/bh/registry.db", "rediss://user:pw@redis.internal:6380"]) {
    const c = loadConfig({
      REGISTRY_URL: url,
      PUBLIC_URL: "http://127.0.0.1:8001",
      TOKEN_SECRET: SECRET_HEX,
    });
    assert.equal(c.cluster?.registryUrl, url);
    assert.match(
      c.processId,
      /^p-[A-Za-z0-9_-]{4}$/,
      "a cluster process without PROCESS_ID gets a random one",
    );
  }
});

Deno.test("loadConfig() turns WebTransport off with WEBTRANSPORT=0; its port follows PORT", () => {
  assert.equal(loadConfig({ WEBTRANSPORT: "0" }).webTransport.enabled, false);
  assert.equal(loadConfig({ PORT: "9100" }).webTransport.port, 9100);
});

Deno.test("loadConfig() turns on dev mode with --dev or DEV=1", () => {
  assert.equal(loadConfig({}, ["--dev"]).dev, true);
  assert.equal(loadConfig({ DEV: "1" }).dev, true);
  assert.equal(loadConfig({ DEV: "0" }, ["--other"]).dev, false);
});

Deno.test("loadConfig() accepts PORT=0 (any free port) and the edges of every range", () => {
  assert.equal(loadConfig({ PORT: "0" }).port, 0);
  assert.equal(loadConfig({ PORT: "65535" }).port, 65535);
  assert.equal(loadConfig({ MAX_CONNECTIONS: "1" }).limits.maxConnections, 1);
  assert.equal(loadConfig({ MAX_CONNECTIONS: "100000" }).limits.maxConnections, 100000);
  for (const level of ["debug", "info", "warn", "error"]) {
    assert.equal(loadConfig({ LOG_LEVEL: level }).logLevel, level);
  }
  assert.equal(loadConfig({ TRUST_PROXY: "0" }).trustProxy, false);
});

/** Parses an EnvironmentFile: KEY=value lines, `#` comments. */
function parseEnvFile(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const m = /^([A-Z_]+)=(.*)$/.exec(line.trim());
    if (m) env[m[1]] = m[2];
  }
  return env;
}

Deno.test("the shipped deploy/bullet-hell.env.example is a valid configuration", async () => {
  const text = await Deno.readTextFile(
    new URL("../../../deploy/bullet-hell.env.example", import.meta.url),
  );
  const env = parseEnvFile(text);
  assert.ok(Object.keys(env).length >= 5, `parsed ${Object.keys(env).join(", ")}`);
  const config = loadConfig(env);
  assert.equal(config.host, "127.0.0.1");
  assert.equal(config.port, 8000);
  assert.equal(config.publicOrigin, "https://game.example.com");
  assert.equal(config.trustProxy, true);
  assert.deepEqual(config.limits, {
    maxConnections: 200,
    maxConnectionsPerIp: 8,
    hubCapacity: 200,
    connectBurstPerIp: 20,
    connectsPerSecPerIp: 2,
  });
});

/** Bad values and the variable each message must name. */
const INVALID: readonly [env: Record<string, string>, names: string, detail: RegExp][] = [
  [{ PORT: "abc" }, "PORT", /"abc".*integer in \[0, 65535\]/],
  [{ PORT: "70000" }, "PORT", /"70000".*integer in \[0, 65535\]/],
  [{ PORT: "-1" }, "PORT", /integer in \[0, 65535\]/],
  [{ PORT: "80.5" }, "PORT", /integer/],
  [{ MAX_CONNECTIONS: "0" }, "MAX_CONNECTIONS", /"0".*integer in \[1, 100000\]/],
  [{ MAX_CONNECTIONS_PER_IP: "0" }, "MAX_CONNECTIONS_PER_IP", /integer in \[1, 10000\]/],
  [{ MAX_CONNECTIONS_PER_IP: "many" }, "MAX_CONNECTIONS_PER_IP", /integer/],
  [{ CONNECT_BURST_PER_IP: "0" }, "CONNECT_BURST_PER_IP", /integer in \[1, 1000000\]/],
  [{ CONNECTS_PER_SEC_PER_IP: "0.5" }, "CONNECTS_PER_SEC_PER_IP", /integer/],
  [{ ALLOWED_HOSTS: "ok.example, http://x" }, "ALLOWED_HOSTS", /"http:\/\/x".*not a host name/],
  [{ SHUTDOWN_GRACE_MS: "-5" }, "SHUTDOWN_GRACE_MS", /integer/],
  [{ DRAIN_SECONDS: "3601" }, "DRAIN_SECONDS", /"3601".*integer in \[0, 3600\]/],
  [{ DRAIN_SECONDS: "5m" }, "DRAIN_SECONDS", /integer/],
  [{ LOG_LEVEL: "loud" }, "LOG_LEVEL", /"loud".*debug, info, warn or error/],
  [{ LOG_LEVEL: "INFO" }, "LOG_LEVEL", /debug, info, warn or error/],
  [{ LINK_SIM: "fast" }, "LINK_SIM", /"fast".*150±50/],
  [{ LINK_SIM: "150±50,stall=250" }, "LINK_SIM", /LENGTH\/EVERY/],
  [{ LINK_SIM: "50±80" }, "LINK_SIM", /jitter cannot exceed the delay/],
  [{ LINK_SIM: "150,loss=5" }, "LINK_SIM", /unknown setting "loss"/],
  [{ DEBUG_LATENCY_MS: "150" }, "DEBUG_LATENCY_MS", /replaced by LINK_SIM.*LINK_SIM=150/],
  [{ TRUST_PROXY: "yes" }, "TRUST_PROXY", /0 or 1/],
  [{ HUB_CAPACITY: "0" }, "HUB_CAPACITY", /integer in \[1, 10000\]/],
  [{ REGISTRY_URL: "kv:", HOSTS_GAMES: "no" }, "HOSTS_GAMES", /0 or 1/],
  [{ BOSS_RUSH: "yes" }, "BOSS_RUSH", /0 or 1/],
  [{ PROCESS_ID: "a/b" }, "PROCESS_ID", /1–16 letters, digits/],
  [{ PROCESS_ID: "x".repeat(17) }, "PROCESS_ID", /1–16/],
  [
    { REGISTRY_URL: "postgres://db" },
    "REGISTRY_URL",
    /redis:\/\/HOST:PORT, rediss:\/\/…, kv: or kv:PATH/,
  ],
  [
    { REGISTRY_URL: "kv:", TOKEN_SECRET: "ab".repeat(32) },
    "PUBLIC_URL",
    /must be set with REGISTRY_URL/,
  ],
  [
    { REGISTRY_URL: "kv:", PUBLIC_URL: "ws://x", TOKEN_SECRET: "ab".repeat(32) },
    "PUBLIC_URL",
    /"ws:\/\/x" must be an http\(s\) URL/,
  ],
  [
    { REGISTRY_URL: "kv:", PUBLIC_URL: "http://x" },
    "TOKEN_SECRET",
    /must be set with REGISTRY_URL/,
  ],
  [
    { REGISTRY_URL: "kv:", PUBLIC_URL: "http://x", TOKEN_SECRET: "short" },
    "TOKEN_SECRET",
    /at least 32 random bytes/,
  ],
  [{ TRUST_PROXY: "true" }, "TRUST_PROXY", /0 or 1/],
  [{ WEBTRANSPORT: "yes" }, "WEBTRANSPORT", /0 or 1/],
  [{ WEBTRANSPORT_PORT: "70000" }, "WEBTRANSPORT_PORT", /integer in \[0, 65535\]/],
  [{ WEBTRANSPORT_PUBLIC_PORT: "0" }, "WEBTRANSPORT_PUBLIC_PORT", /integer in \[1, 65535\]/],
  [{ TLS_CERT: "/etc/ssl/game.pem" }, "TLS_CERT", /go together/],
  [{ PUBLIC_ORIGIN: "ftp://x" }, "PUBLIC_ORIGIN", /"ftp:\/\/x".*not an http\(s\) origin/],
  [{ PUBLIC_ORIGIN: "game.example.com" }, "PUBLIC_ORIGIN", /not an http\(s\) origin/],
  [
    { ALLOWED_ORIGINS: "https://ok.example, not a url" },
    "ALLOWED_ORIGINS",
    /"not a url".*not an http\(s\) origin/,
  ],
  [
    { ALLOWED_ORIGINS: "https://ok.example,ws://sock.example" },
    "ALLOWED_ORIGINS",
    /"ws:\/\/sock\.example"/,
  ],
];

for (const [env, name, detail] of INVALID) {
  const [[key, value]] = Object.entries(env);
  Deno.test(`loadConfig() refuses ${key}=${value} with a message naming ${name}`, () => {
    assert.throws(
      () => loadConfig(env),
      (err: unknown) => {
        assert.ok(err instanceof Error);
        assert.match(err.message, new RegExp(`^${name}\\b`), "the message starts with the name");
        assert.match(err.message, detail);
        return true;
      },
    );
  });
}

Deno.test("the door's C-library sockets are on by default and off with NATIVE_TCP=0", () => {
  assert.equal(loadConfig({}).nativeTcp, true);
  assert.equal(loadConfig({ NATIVE_TCP: "0" }).nativeTcp, false);
  assert.equal(loadConfig({ NATIVE_TCP: "1" }).nativeTcp, true);
  assert.throws(() => loadConfig({ NATIVE_TCP: "yes" }), /NATIVE_TCP must be 0 or 1/);
});

Deno.test("the game loop asks for a real-time priority by default, not with LOOP_PRIORITY=normal or on Deno Deploy", () => {
  assert.equal(loadConfig({}).loopPriority, "realtime");
  assert.equal(loadConfig({ LOOP_PRIORITY: "normal" }).loopPriority, "normal");
  assert.equal(loadConfig({ LOOP_PRIORITY: "realtime" }).loopPriority, "realtime");
  assert.equal(loadConfig({ DENO_DEPLOYMENT_ID: "abc" }).loopPriority, "normal", "not on Deploy");
  assert.throws(
    () => loadConfig({ LOOP_PRIORITY: "high" }),
    /LOOP_PRIORITY must be realtime or normal/,
  );
});

Deno.test("the front door is on by default, off with FRONT_DOOR=0 and by default on Deno Deploy (so is the drain)", () => {
  assert.ok(loadConfig({}).door);
  assert.equal(loadConfig({ FRONT_DOOR: "0" }).door, undefined);
  assert.equal(loadConfig({ DENO_DEPLOYMENT_ID: "abc" }).door, undefined);
  assert.ok(loadConfig({ DENO_DEPLOYMENT_ID: "abc", FRONT_DOOR: "1" }).door);
  // Nor a drain: the platform kills an isolate about 5 s after its SIGINT.
  assert.equal(loadConfig({ DENO_DEPLOYMENT_ID: "abc" }).drainMs, 0);
  assert.equal(loadConfig({ DENO_DEPLOYMENT_ID: "abc", DRAIN_SECONDS: "4" }).drainMs, 4000);
  const tuned = loadConfig({ HEADER_TIMEOUT_MS: "2500", MAX_HTTP_CONNECTIONS_PER_IP: "4" }).door!;
  assert.equal(tuned.headerTimeoutMs, 2500);
  assert.equal(tuned.maxConnectionsPerIp, 4);
  assert.throws(() => loadConfig({ FRONT_DOOR: "yes" }), /FRONT_DOOR must be 0 or 1/);
  assert.throws(
    () => loadConfig({ HEADER_TIMEOUT_MS: "100" }),
    /HEADER_TIMEOUT_MS.*\[500, 120000\]/,
  );
});

Deno.test("TOKEN_SECRET signs resume tokens on a lone process too, and must be 32+ bytes", () => {
  const hex = "ab".repeat(32);
  assert.equal(loadConfig({ TOKEN_SECRET: hex }).tokenSecret?.byteLength, 32);
  assert.throws(() => loadConfig({ TOKEN_SECRET: "abcd" }), /TOKEN_SECRET must be at least 32/);
});
