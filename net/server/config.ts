/**
 * Server configuration from environment variables, validated up front: a bad
 * value stops start-up with a message that names the variable.
 */
import { DOOR_LIMITS, LIMITS } from "../../content/net_tuning.ts";
import type { DoorLimits } from "./front_door.ts";
import { type LinkSpec, parseLinkSpec } from "../link/mod.ts";
import type { ServerLimits } from "./server.ts";
import { parseSecret, randomId } from "./tokens.ts";

/**
 * The V8 flags every launch of the server carries (`deno task start`, deploy/'s
 * Dockerfile and systemd units, the load test; tests/net/server/launch_test.ts holds
 * them to this), measured in docs/CAPACITY.md:
 * - an 8 MB young generation: a scavenge's pause is what survives it, and Deno's default
 *   lets it grow to 32 MB;
 * - no allocation-site pretenuring: V8 had decided that the objects a tick and a socket
 *   read make (events, audit steps) live long, and put them straight into the old
 *   generation, where they are garbage for a full collection to find. They die young;
 * - single-threaded garbage collection: a process is one core's worth of game (the load
 *   test pins it to one), and V8's collector threads on that core only take it from the
 *   tick mid-step; the scavenges already run between ticks, on the main thread;
 * - an old generation let grow to five times what a full collection left live (V8 otherwise
 *   picks 1.1 to 4 times, from how fast its collector and the program run): with the
 *   collector on the main thread, a full collection's last pause is 10–35 ms, and one over
 *   a tick makes the next tick late. Fewer of them, for ~40 MB more memory at 600 players;
 * - no memory reducer: it starts full collections of its own, which compact to give memory
 *   back; under load it started one ~100 s into three runs of five at 800 players, far below
 *   the allocation limit (98–112 ms pauses), and one of 631 ms in a ladder (a 436 MB heap).
 *   A server's heap is sized for its load: the allocation limit above starts its full
 *   collections, and nothing else. The cost: memory freed when the load falls goes back
 *   to the system only at the next full collection.
 */
export const SERVER_V8_FLAGS =
  "--max-semi-space-size=8,--no-allocation-site-pretenuring,--single-threaded-gc,--heap-growing-percent=400,--no-memory-reducer";

/** Everything main.ts needs to start. */
export interface Config {
  readonly host: string;
  readonly port: number;
  readonly publicOrigin: string | undefined;
  readonly allowedOrigins: readonly string[];
  /** Host names served besides IP literals, localhost and the allowed origins' hosts. */
  readonly allowedHosts: readonly string[];
  readonly trustProxy: boolean;
  readonly logLevel: "debug" | "info" | "warn" | "error";
  readonly dev: boolean;
  readonly shutdownGraceMs: number;
  /**
   * On SIGTERM, how long runs in progress may go on before the restart (DRAIN_SECONDS);
   * 0 restarts at once. The unit's and container's stop timeouts must exceed it.
   */
  readonly drainMs: number;
  /** A simulated link on every game connection (LINK_SIM), to try real ping; none if unset. */
  readonly linkSim: LinkSpec | undefined;
  /** WebTransport on a UDP port, unless WEBTRANSPORT=0 (or QUIC is unavailable). */
  readonly webTransport: {
    readonly enabled: boolean;
    /** Address to bind (WEBTRANSPORT_HOST, default HOST): public while HTTP stays behind a proxy. */
    readonly host: string;
    /** UDP port to bind (WEBTRANSPORT_PORT, default PORT). */
    readonly port: number;
    /** UDP port the page connects to (WEBTRANSPORT_PUBLIC_PORT, default the bound one). */
    readonly publicPort: number | undefined;
    /** PEM files of an operator's certificate (TLS_CERT, TLS_KEY); otherwise self-signed. */
    readonly certFile: string | undefined;
    readonly keyFile: string | undefined;
  };
  readonly limits: Partial<ServerLimits>;
  /** This process's name in /metrics and, in a cluster, in the registry (PROCESS_ID). */
  readonly processId: string;
  /** BOSS_RUSH=1 (load tests): a dungeon skips its trash waves and opens on the boss. */
  readonly bossRush: boolean;
  /** Set when REGISTRY_URL is: this process is one of several sharing a registry. */
  readonly cluster: ClusterConfig | undefined;
  /**
   * The front door's limits, or undefined to serve straight from Deno.serve (FRONT_DOOR=0,
   * and the default on Deno Deploy, whose platform is the front door).
   */
  readonly door: DoorLimits | undefined;
  /**
   * The door listens through the C library's sockets (net/server/native_tcp.ts) where it
   * can (Linux, an IP literal to bind): NATIVE_TCP, default 1; 0 for Deno's sockets.
   */
  readonly nativeTcp: boolean;
  /**
   * The game loop's thread asks for a real-time priority (net/server/loop_priority.ts):
   * LOOP_PRIORITY, `realtime` by default (`normal` on Deno Deploy); `normal` to leave it as
   * started.
   */
  readonly loopPriority: "realtime" | "normal";
  /**
   * Signs resume tokens (and, in a cluster, transfer tickets): TOKEN_SECRET. Unset on a
   * lone process: a random secret per start (tokens die with the process anyway).
   */
  readonly tokenSecret: Uint8Array | undefined;
}

/** A process's part in a cluster. */
export interface ClusterConfig {
  /** `redis://…`, `rediss://…`, `kv:` or `kv:PATH`. */
  readonly registryUrl: string;
  /** Where other processes send players (its /ws is the game socket); "" if it hosts none. */
  readonly publicUrl: string;
  /** False (HOSTS_GAMES=0): this process only places players on the others. */
  readonly hostsGames: boolean;
  /** Shared by every process: transfer tickets are signed with it (TOKEN_SECRET). */
  readonly tokenSecret: Uint8Array;
}

/** Process ids are short (they prefix every instance id and travel in tickets). */
const PROCESS_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,15}$/;

function intVar(
  env: Record<string, string>,
  name: string,
  fallback: number,
  min: number,
  max: number,
) {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const v = Number(raw);
  if (!Number.isInteger(v) || v < min || v > max) {
    throw new Error(`${name}=${JSON.stringify(raw)} must be an integer in [${min}, ${max}]`);
  }
  return v;
}

function origin(name: string, raw: string): string {
  try {
    const u = new URL(raw);
    if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error();
    return u.origin;
  } catch {
    throw new Error(`${name} contains ${JSON.stringify(raw)}, which is not an http(s) origin`);
  }
}

function linkVar(env: Record<string, string>): LinkSpec | undefined {
  if (env.DEBUG_LATENCY_MS) {
    throw new Error(
      `DEBUG_LATENCY_MS was replaced by LINK_SIM, which delays both ways: ` +
        `LINK_SIM=${env.DEBUG_LATENCY_MS} (or e.g. LINK_SIM=150±50,stall=250/4000)`,
    );
  }
  try {
    return parseLinkSpec(env.LINK_SIM ?? "");
  } catch (err) {
    throw new Error(`LINK_SIM=${JSON.stringify(env.LINK_SIM)}: ${(err as Error).message}`);
  }
}

/** Reads and validates the configuration. `--dev` in args turns on dev mode. */
export function loadConfig(env: Record<string, string>, args: readonly string[] = []): Config {
  const logLevel = env.LOG_LEVEL ?? "info";
  if (!["debug", "info", "warn", "error"].includes(logLevel)) {
    throw new Error(`LOG_LEVEL=${JSON.stringify(logLevel)} must be debug, info, warn or error`);
  }
  const trust = env.TRUST_PROXY ?? "0";
  if (trust !== "0" && trust !== "1") throw new Error(`TRUST_PROXY must be 0 or 1`);
  const publicOrigin = env.PUBLIC_ORIGIN ? origin("PUBLIC_ORIGIN", env.PUBLIC_ORIGIN) : undefined;
  const allowedOrigins = (env.ALLOWED_ORIGINS ?? "").split(",").map((s) => s.trim()).filter(
    Boolean,
  ).map((o) => origin("ALLOWED_ORIGINS", o));
  if (publicOrigin) allowedOrigins.push(publicOrigin);
  const processId = env.PROCESS_ID || undefined;
  if (processId !== undefined && !PROCESS_ID.test(processId)) {
    throw new Error(
      `PROCESS_ID=${
        JSON.stringify(processId)
      } must be 1–16 letters, digits, _ or -, starting with a letter or digit`,
    );
  }
  const cluster = clusterVars(env);
  const bossRush = env.BOSS_RUSH ?? "0";
  if (bossRush !== "0" && bossRush !== "1") throw new Error("BOSS_RUSH must be 0 or 1");
  const allowedHosts = (env.ALLOWED_HOSTS ?? "").split(",").map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  for (const h of allowedHosts) {
    if (!/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(h)) {
      throw new Error(`ALLOWED_HOSTS contains ${JSON.stringify(h)}, which is not a host name`);
    }
  }
  const onDeploy = Boolean(env.DENO_DEPLOYMENT_ID);
  const doorFlag = env.FRONT_DOOR ?? (onDeploy ? "0" : "1");
  if (doorFlag !== "0" && doorFlag !== "1") throw new Error(`FRONT_DOOR must be 0 or 1`);
  const door: DoorLimits | undefined = doorFlag === "1"
    ? {
      ...DOOR_LIMITS,
      // Behind a proxy every connection comes from the proxy: the cap is the proxy's job.
      maxConnectionsPerIp: trust === "1" ? 0 : intVar(
        env,
        "MAX_HTTP_CONNECTIONS_PER_IP",
        DOOR_LIMITS.maxConnectionsPerIp,
        1,
        100_000,
      ),
      headerTimeoutMs: intVar(env, "HEADER_TIMEOUT_MS", DOOR_LIMITS.headerTimeoutMs, 500, 120_000),
      // A hello may carry a transfer ticket: the largest message there is.
      maxMessageBytes: LIMITS.maxHelloBytes,
    }
    : undefined;
  const nativeTcp = env.NATIVE_TCP ?? "1";
  if (nativeTcp !== "0" && nativeTcp !== "1") throw new Error(`NATIVE_TCP must be 0 or 1`);
  // Deno Deploy runs isolates, not a thread of one's own: nothing to ask for there.
  const loopPriority = env.LOOP_PRIORITY ?? (onDeploy ? "normal" : "realtime");
  if (loopPriority !== "realtime" && loopPriority !== "normal") {
    throw new Error(`LOOP_PRIORITY must be realtime or normal`);
  }
  const wt = env.WEBTRANSPORT ?? "1";
  if (wt !== "0" && wt !== "1") throw new Error(`WEBTRANSPORT must be 0 or 1`);
  if (Boolean(env.TLS_CERT) !== Boolean(env.TLS_KEY)) {
    throw new Error("TLS_CERT and TLS_KEY go together: set both or neither");
  }
  const port = intVar(env, "PORT", 8000, 0, 65535);
  const host = env.HOST || "127.0.0.1";
  const wtPort = intVar(env, "WEBTRANSPORT_PORT", port, 0, 65535);
  const wtPublicPort = env.WEBTRANSPORT_PUBLIC_PORT
    ? intVar(env, "WEBTRANSPORT_PUBLIC_PORT", wtPort, 1, 65535)
    : undefined;
  return {
    host,
    port,
    webTransport: {
      enabled: wt === "1",
      host: env.WEBTRANSPORT_HOST || host,
      port: wtPort,
      publicPort: wtPublicPort,
      certFile: env.TLS_CERT || undefined,
      keyFile: env.TLS_KEY || undefined,
    },
    publicOrigin,
    allowedOrigins,
    allowedHosts,
    trustProxy: trust === "1",
    logLevel: logLevel as Config["logLevel"],
    dev: args.includes("--dev") || env.DEV === "1",
    shutdownGraceMs: intVar(env, "SHUTDOWN_GRACE_MS", 3000, 0, 60000),
    // Deno Deploy kills an isolate about 5 s after its SIGINT: waiting there only loses
    // the chance to tell the players.
    drainMs: intVar(env, "DRAIN_SECONDS", onDeploy ? 0 : 300, 0, 3600) * 1000,
    linkSim: linkVar(env),
    door,
    nativeTcp: nativeTcp === "1",
    loopPriority,
    tokenSecret: cluster?.tokenSecret ?? secretVar(env),
    limits: {
      maxConnections: intVar(env, "MAX_CONNECTIONS", LIMITS.maxConnections, 1, 100000),
      maxConnectionsPerIp: intVar(
        env,
        "MAX_CONNECTIONS_PER_IP",
        LIMITS.maxConnectionsPerIp,
        1,
        10000,
      ),
      hubCapacity: intVar(env, "HUB_CAPACITY", LIMITS.hubCapacity, 1, 10000),
      connectBurstPerIp: intVar(
        env,
        "CONNECT_BURST_PER_IP",
        LIMITS.connectBurstPerIp,
        1,
        1_000_000,
      ),
      connectsPerSecPerIp: intVar(
        env,
        "CONNECTS_PER_SEC_PER_IP",
        LIMITS.connectsPerSecPerIp,
        1,
        1_000_000,
      ),
    },
    // In a cluster an unnamed process gets a random name: a restart is a new process anyway.
    processId: processId ?? (cluster ? `p-${randomId(3)}` : "single"),
    bossRush: bossRush === "1",
    cluster,
  };
}

function secretVar(env: Record<string, string>): Uint8Array | undefined {
  if (!env.TOKEN_SECRET) return undefined;
  try {
    return parseSecret(env.TOKEN_SECRET);
  } catch (err) {
    throw new Error(`TOKEN_SECRET ${(err as Error).message}`);
  }
}

function clusterVars(env: Record<string, string>): ClusterConfig | undefined {
  const registryUrl = env.REGISTRY_URL || undefined;
  if (registryUrl === undefined) return undefined;
  if (!/^(rediss?:\/\/.+|kv:.*)$/.test(registryUrl)) {
    throw new Error(
      `REGISTRY_URL=${
        JSON.stringify(registryUrl)
      } must be redis://HOST:PORT, rediss://…, kv: or kv:PATH`,
    );
  }
  const hosts = env.HOSTS_GAMES ?? "1";
  if (hosts !== "0" && hosts !== "1") throw new Error("HOSTS_GAMES must be 0 or 1");
  const hostsGames = hosts === "1";
  if (!env.PUBLIC_URL && hostsGames) {
    throw new Error(
      "PUBLIC_URL must be set with REGISTRY_URL: the http(s) URL other processes send players to",
    );
  }
  const publicUrl = env.PUBLIC_URL ? httpUrl(env.PUBLIC_URL) : "";
  if (!env.TOKEN_SECRET) {
    throw new Error(
      "TOKEN_SECRET must be set with REGISTRY_URL, the same on every process (try: openssl rand -hex 32)",
    );
  }
  let tokenSecret: Uint8Array;
  try {
    tokenSecret = parseSecret(env.TOKEN_SECRET);
  } catch (err) {
    throw new Error(`TOKEN_SECRET ${(err as Error).message}`);
  }
  return { registryUrl, publicUrl, hostsGames, tokenSecret };
}

function httpUrl(raw: string): string {
  try {
    const u = new URL(raw);
    if ((u.protocol !== "http:" && u.protocol !== "https:") || u.search || u.hash) {
      throw new Error();
    }
    return u.toString().replace(/\/+$/, "");
  } catch {
    throw new Error(
      `PUBLIC_URL=${
        JSON.stringify(raw)
      } must be an http(s) URL without query, e.g. https://game.example.com/p/1`,
    );
  }
}
