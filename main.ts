/**
 * Composition root and the only place that reads the environment, the wall clock
 * or process signals: config → game server → Hono app → Deno.serve.
 */
import {
  type CertificatePair,
  ClusterNode,
  type Config,
  errorText,
  FrontDoor,
  GameServer,
  loadConfig,
  type Logger,
  mallocOf,
  NativeTcp,
  PriorityGuard,
  quicAvailable,
  raiseLoopPriority,
  realClock,
  selfSignedCertificate,
  SERVER_MALLOC,
  ThreadScheduling,
  TokenSigner,
  WEBTRANSPORT_PATH,
  WebTransportServer,
} from "./net/server/mod.ts";
import { openStore, Registry } from "./net/server/registry/mod.ts";
import { BOSS_RUSH_DELAY_TICKS, CLUSTER_TIMING, WEBTRANSPORT } from "./content/net_tuning.ts";
import { createApp } from "./routes/app.ts";
import { formatLinkSpec } from "./net/link/mod.ts";
import { TICK_MS } from "./sim/mod.ts";

/** The header the front door writes each client's address in. */
const PEER_HEADER = "x-warden-peer";

/** While draining, how often to look whether the last run has ended. */
const DRAIN_POLL_MS = 250;

/** Events that mean a bug: written at every log level. */
const ERROR_EVENTS = new Set(["handler_error", "instance_failed", "tick_error", "registry_down"]);
/** Events that mean trouble, not a bug, and the end of one: written at `warn` and `info`. */
const WARN_EVENTS = new Set([
  "slow_tick",
  "loop_stall",
  "loop_priority_lowered",
  "loop_priority_restored",
]);

/**
 * How often the loop's real-time priority is checked against dropped ticks, how many
 * checks in a row (30 s: longer than a start-up's or a crowd's arrival) give it back, the
 * share of a check's ticks that must have been dropped for it to count, and how many clean
 * checks in a row take it again (5 min, doubling up to 80 each time it is given back again).
 */
const PRIORITY_CHECK_MS = 5000;
const PRIORITY_OVERLOAD_CHECKS = 6;
const PRIORITY_OVERLOAD_SHARE = 0.02;
const PRIORITY_RECOVER_CHECKS = 60;

/** Logs one JSON object per line. */
function jsonLogger(minLevel: string): Logger {
  const shown = (event: string) =>
    ERROR_EVENTS.has(event) ||
    (minLevel !== "error" && (minLevel !== "warn" || WARN_EVENTS.has(event)));
  return (event, fields) => {
    if (!shown(event)) return;
    console.log(JSON.stringify({ t: new Date().toISOString(), event, ...fields }));
  };
}

/**
 * Puts the game loop's thread (this one: every tick runs here) at a real-time priority
 * (net/server/loop_priority.ts), and gives it back if the loop falls behind.
 */
function holdLoopPriority(server: GameServer, config: Config, log: Logger): void {
  if (config.loopPriority === "normal") {
    log("loop_priority", { got: "normal", why: "LOOP_PRIORITY=normal" });
    return;
  }
  const sched = ThreadScheduling.open();
  const got = raiseLoopPriority(sched);
  log("loop_priority", { ...got });
  if (got.got !== "realtime" || !sched) return;
  const guard = new PriorityGuard({
    lower: () => sched.normal(),
    raise: () => sched.realtime() === 0,
    overloadChecks: PRIORITY_OVERLOAD_CHECKS,
    overloadShare: PRIORITY_OVERLOAD_SHARE,
    recoverChecks: PRIORITY_RECOVER_CHECKS,
  });
  const waitS = (checks: number) => checks * PRIORITY_CHECK_MS / 1000;
  const timer = setInterval(() => {
    const verdict = guard.check(server.scheduler.stats);
    if (verdict === "lowered") {
      log("loop_priority_lowered", {
        got: "normal",
        why: `over ${PRIORITY_OVERLOAD_SHARE * 100} % of ticks dropped for ${
          waitS(PRIORITY_OVERLOAD_CHECKS)
        } s: overloaded, the core is given back`,
        retryAfterS: waitS(guard.recoverChecks),
      });
    } else if (verdict === "raised") {
      log("loop_priority_restored", {
        got: "realtime",
        why: `no tick dropped for ${waitS(guard.recoverChecks)} s`,
      });
    }
  }, PRIORITY_CHECK_MS);
  Deno.unrefTimer(timer);
}

/** Serves the client: the prebuilt bundle, or in dev a fresh build after every change. */
async function clientSource(dev: boolean): Promise<() => Promise<string>> {
  const dist = new URL("./dist/client.js", import.meta.url);
  if (!dev) {
    try {
      const js = await Deno.readTextFile(dist);
      return () => Promise.resolve(js);
    } catch {
      console.log("dist/client.js not found: bundling in-process (run `deno task build`)");
    }
  }
  // esbuild is loaded only here: a production start with a built bundle never touches it.
  const { bundleClient, stopBundler } = await import("./tools/build.ts");
  let current = bundleClient({ minify: !dev });
  if (dev) {
    (async () => {
      const watcher = Deno.watchFs(
        ["client", "net", "sim", "content"].map((d) =>
          new URL(`./${d}/`, import.meta.url).pathname
        ),
      );
      let timer: ReturnType<typeof setTimeout> | undefined;
      for await (const _ of watcher) {
        clearTimeout(timer);
        timer = setTimeout(() => {
          current = bundleClient({ minify: false }).catch((err) => {
            console.error("client build failed:", err.message);
            return `document.body.textContent = ${JSON.stringify("Build failed: " + err.message)}`;
          });
          console.log("client rebuilt; reload the page");
        }, 100);
      }
    })();
  } else {
    await current;
    await stopBundler();
  }
  return () => current;
}

/**
 * WebTransport on its UDP port, with the operator's certificate files (re-read at every
 * rotation, so a renewal is picked up) or a self-signed one made afresh each time.
 */
async function startWebTransport(
  server: GameServer,
  config: Config,
  log: Logger,
): Promise<WebTransportServer | undefined> {
  const wt = config.webTransport;
  if (!wt.enabled) return undefined;
  if (!quicAvailable()) {
    console.log("WebTransport off: this Deno has no QUIC (run with --unstable-net)");
    return undefined;
  }
  const { certFile, keyFile } = wt;
  const hostnames = ["localhost", "127.0.0.1", config.host];
  if (config.publicOrigin) hostnames.push(new URL(config.publicOrigin).hostname);
  const certificate = async (): Promise<CertificatePair> => {
    if (certFile && keyFile) {
      const certPem = await Deno.readTextFile(certFile);
      return {
        certPem,
        keyPem: await Deno.readTextFile(keyFile),
        sha256: new Uint8Array(0),
        notAfterMs: NaN,
        selfSigned: false,
      };
    }
    return await selfSignedCertificate(Date.now(), {
      validityDays: WEBTRANSPORT.certValidityDays,
      hostnames: [...new Set(hostnames)],
    });
  };
  const wts = new WebTransportServer(server, {
    hostname: wt.host,
    port: wt.port,
    certificate,
    rotateEveryMs: WEBTRANSPORT.certRotateMs,
    log,
  });
  try {
    await wts.start();
  } catch (err) {
    console.error(`WebTransport off: ${(err as Error).message}`);
    return undefined;
  }
  console.log(`WebTransport on udp/${wts.port} (${certFile ? "TLS_CERT" : "self-signed"})`);
  return wts;
}

if (import.meta.main) {
  let config;
  try {
    config = loadConfig(Deno.env.toObject(), Deno.args);
  } catch (err) {
    console.error(`Invalid configuration: ${(err as Error).message}`);
    Deno.exit(2);
  }
  const log = jsonLogger(config.logLevel);
  // Which malloc the runtime got (net/server/malloc.ts): glibc's costs a loaded server
  // CPU, and a launch without the preload says nothing else about it.
  const malloc = mallocOf();
  log("process", {
    pid: Deno.pid,
    deno: Deno.version.deno,
    malloc,
    ...(malloc === "system" ? { note: `preload ${SERVER_MALLOC}: deploy/README.md` } : {}),
  });
  // The door's sockets through the C library, polled by the game loop before each tick (and
  // by their own timer a little over a tick after the last poll, should the loop stall).
  const native = config.door && config.nativeTcp
    ? NativeTcp.open({
      pollMs: TICK_MS + 4,
      onError: (err) => log("door_socket_error", { error: errorText(err) }),
    })
    : undefined;
  const server = new GameServer({
    // BOSS_RUSH (load tests): dungeons open on the boss after a short wait to fill up.
    worldDef: config.bossRush
      ? (kind, _id, world) =>
        kind === "dungeon" ? { ...world, waves: [], waveDelayTicks: BOSS_RUSH_DELAY_TICKS } : world
      : undefined,
    clock: realClock,
    limits: config.limits,
    log,
    processId: config.processId,
    instancePrefix: config.cluster ? `${config.processId}/` : "",
    tokenSecret: config.tokenSecret,
    beforeTick: native && (() => native.poll()),
  });
  let cluster: ClusterNode | undefined;
  if (config.cluster) {
    const store = await openStore(config.cluster.registryUrl, {
      now: Date.now,
      onError: (err) => log("registry_error", { error: err.message }),
    });
    cluster = new ClusterNode(server, {
      registry: new Registry(store, { now: Date.now, ...CLUSTER_TIMING }),
      signer: new TokenSigner(config.cluster.tokenSecret),
      processId: config.processId,
      publicUrl: config.cluster.publicUrl,
      hostsGames: config.cluster.hostsGames,
      wallNow: Date.now,
    });
    log("cluster", {
      process: config.processId,
      url: config.cluster.publicUrl,
      registry: config.cluster.registryUrl.replace(/\/\/[^@/]*@/, "//…@"),
    });
  }
  const wts = await startWebTransport(server, config, log);
  // The door starts after the app (it hands the app its game sockets); /metrics reads it then.
  const started: { door?: FrontDoor } = {};
  const app = createApp(server, {
    clientJs: await clientSource(config.dev),
    allowedOrigins: config.allowedOrigins,
    // Other processes send players to PUBLIC_URL: its host is this server's name too.
    allowedHosts: [
      ...config.allowedHosts,
      ...(config.cluster?.publicUrl ? [new URL(config.cluster.publicUrl).hostname] : []),
    ],
    trustProxy: config.trustProxy,
    linkSim: config.linkSim,
    peerHeader: config.door ? PEER_HEADER : undefined,
    webTransport: wts && (() => ({
      port: config.webTransport.publicPort ?? wts.port,
      path: WEBTRANSPORT_PATH,
      certificateHashes: wts.certificateHashes,
    })),
    doorStats: () => started.door?.stats,
  });
  if (config.linkSim) {
    log("link_sim", { link: formatLinkSpec(config.linkSim), note: "every connection is slowed" });
  }
  holdLoopPriority(server, config, log);
  server.start();
  // Not awaited: a registry that is down at start-up only delays placements.
  cluster?.start();
  const announce = ({ hostname, port }: Deno.NetAddr) => {
    console.log(`Warden of the Fold: play at http://${hostname}:${port}/`);
  };
  // With the front door, Deno.serve listens on a Unix socket only the door can reach.
  const socketDir = config.door ? await Deno.makeTempDir({ prefix: "warden-" }) : undefined;
  const http = socketDir
    ? Deno.serve({ path: `${socketDir}/http.sock`, onListen: () => {} }, app.fetch)
    : Deno.serve({ hostname: config.host, port: config.port, onListen: announce }, app.fetch);
  const door = socketDir && config.door
    ? FrontDoor.listen({
      hostname: config.host,
      port: config.port,
      native,
      backend: { transport: "unix", path: `${socketDir}/http.sock` },
      limits: config.door,
      peerHeader: PEER_HEADER,
      clock: realClock,
      log,
      // Game sockets are ended by the door: their frames skip the hop to Deno.serve.
      sockets: { path: "/ws", fetch: (req, info) => app.fetch(req, info) },
    })
    : undefined;
  started.door = door;
  if (door) {
    log("door", {
      sockets: door.native ? "native" : "deno",
      ...(config.nativeTcp && !door.native
        ? { note: "the C library's sockets need Linux, FFI (-A) and an IP literal for HOST" }
        : {}),
    });
    announce(door.addr);
  }

  // SIGTERM (or Ctrl-C) drains: no new players or runs, runs in progress play on for up
  // to DRAIN_SECONDS, then everyone gets 4009 and the process exits 0. A second signal
  // skips the wait.
  let phase: "running" | "draining" | "stopping" = "running";
  const stop = async (why: string) => {
    if (phase === "stopping") return;
    phase = "stopping";
    log("shutdown", { why, runs: server.runsInProgress, players: server.playerCount });
    door?.stopAccepting();
    server.shutdown("server restarting");
    const deadline = setTimeout(() => Deno.exit(0), config.shutdownGraceMs);
    await cluster?.stop({ withdrawWithinMs: Math.min(1000, config.shutdownGraceMs) });
    // Give the close frames a moment on the wire: http.shutdown() aborts upgraded sockets,
    // and clients should read "server restarting", not a bare 1001.
    await new Promise((r) => setTimeout(r, Math.min(300, config.shutdownGraceMs)));
    wts?.close();
    await http.shutdown();
    await door?.close();
    if (socketDir) await Deno.remove(socketDir, { recursive: true }).catch(() => {});
    clearTimeout(deadline);
    Deno.exit(0);
  };
  const drain = (signal: string) => {
    if (phase === "draining") stop(`${signal} again`);
    if (phase !== "running") return;
    phase = "draining";
    server.drain();
    // Nobody is placed here from now on; the registry still finds this process for the
    // resumes of its runs in progress until it leaves at the stop.
    cluster?.drain();
    const until = Date.now() + config.drainMs;
    const runs = server.runsInProgress;
    if (runs > 0) {
      console.log(
        `${signal}: draining, ${runs} run(s) in progress, for up to ${config.drainMs / 1000} s ` +
          `(send ${signal} again to stop now)`,
      );
    }
    const poll = () => {
      if (phase !== "draining") return;
      if (server.runsInProgress === 0) stop(`${signal}, drained`);
      else if (Date.now() >= until) stop(`${signal}, DRAIN_SECONDS over`);
      else setTimeout(poll, DRAIN_POLL_MS);
    };
    poll();
  };
  Deno.addSignalListener("SIGTERM", () => drain("SIGTERM"));
  Deno.addSignalListener("SIGINT", () => drain("SIGINT"));
}
