/**
 * The Hono app: the page and its bundle, `/ws` upgraded into a game connection,
 * `/transport` (where WebTransport listens, and its certificate hash), `/healthz` and
 * `/metrics`. Thin on purpose: the game lives in net/. Every answer
 * carries a strict CSP; a Host the server does not know (DNS rebinding) gets 421;
 * a refused game connection is refused before the upgrade, with an HTTP status and
 * a reason a page can fetch (GET /ws without an upgrade).
 */
import { type Context, Hono } from "hono";
import { getConnInfo } from "hono/deno";
import {
  type DoorStats,
  type GameServer,
  health,
  LinkTransport,
  realClock,
  type Refusal,
  renderMetrics,
  type ServerSocket,
  type Transport,
  upgradeWebSocket,
  WebSocketTransport,
} from "../net/server/mod.ts";
import { type LinkClock, LinkPipe, LinkSim, type LinkSpec } from "../net/link/mod.ts";
import { CloseCode } from "../net/wire/mod.ts";

/** What the app serves besides the game socket. */
export interface AppOptions {
  /** The client bundle (JavaScript), fetched per request so a dev rebuild shows on reload. */
  readonly clientJs: () => Promise<string>;
  /** Origins allowed to open /ws besides the page's own. */
  readonly allowedOrigins?: readonly string[];
  /** Take the client address from X-Forwarded-For (behind a trusted proxy). */
  readonly trustProxy?: boolean;
  /**
   * The header the front door writes the client's address in (net/server/front_door.ts).
   * Set only when the app is reachable through the door alone (it listens on a private
   * Unix socket then), since a client could otherwise write it too.
   */
  readonly peerHeader?: string;
  /**
   * Host names the server answers to besides IP literals and localhost: the hosts of
   * the allowed origins are added. Anything else is refused (DNS rebinding).
   */
  readonly allowedHosts?: readonly string[];
  /**
   * A simulated link on every game connection, both ways (LINK_SIM in dev): delay,
   * jitter, stalls. Each connection gets its own path under this spec.
   */
  readonly linkSim?: LinkSpec;
  /** The clock the simulated link runs on (the real one unless a test brings its own). */
  readonly linkClock?: LinkClock;
  /** The front door's counts, for /metrics (undefined: no door). */
  readonly doorStats?: () => DoorStats | undefined;
  /** Where WebTransport listens now, if it does (the certificate hash changes on rotation). */
  readonly webTransport?: () => TransportOffer["webTransport"];
}

/**
 * GET /transport: how the page may connect. The page tries WebTransport on the page's
 * own host at `port` first (pinning `certificateHashes` when the server made its own
 * certificate), then the WebSocket at `/ws`.
 */
export interface TransportOffer {
  readonly webTransport: {
    readonly port: number;
    readonly path: string;
    /** Base64 SHA-256 of a self-signed certificate; empty for a CA-signed one. */
    readonly certificateHashes: readonly string[];
  } | null;
  readonly webSocketPath: string;
}

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1, maximum-scale=1, user-scalable=no">
<title>Warden of the Fold</title>
<link rel="icon" type="image/svg+xml" href="/favicon.svg">
<style>
html,body{margin:0;height:100%;background:#07080f;color:#e8e6f0;overflow:hidden;
font:15px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;touch-action:none;user-select:none}
#app{position:fixed;inset:0}
</style>
</head>
<body><div id="app"></div><script type="module" src="/client.js"></script></body>
</html>`;

/** The tab icon: the Warden's folded star, inline SVG (no image files to ship). */
export const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64">
<rect width="64" height="64" rx="14" fill="#120d1f"/>
<path d="M32 6l6 14 15-5-5 15 14 6-14 6 5 15-15-5-6 14-6-14-15 5 5-15-14-6 14-6-5-15 15 5z"
 fill="#1a1030" stroke="#3fd6c8" stroke-width="3" stroke-linejoin="round"/>
<circle cx="32" cy="32" r="7" fill="#5ff4ff"/></svg>`;
/** Host names always answered: loopback names and any IP literal (rebinding needs a name). */
function isLoopbackOrIp(hostname: string): boolean {
  if (hostname === "localhost" || hostname.endsWith(".localhost")) return true;
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(hostname)) return true;
  return hostname.startsWith("[") && hostname.endsWith("]");
}

/**
 * True when a request whose Host header is `host` is for this server: an IP literal,
 * localhost, or one of `allowed` (host names, lower case, no port). No Host header
 * is not a browser and passes.
 */
export function hostAllowed(host: string | undefined, allowed: ReadonlySet<string>): boolean {
  if (host === undefined) return true;
  let hostname: string;
  try {
    hostname = new URL(`http://${host}`).hostname.toLowerCase();
  } catch {
    return false;
  }
  return isLoopbackOrIp(hostname) || allowed.has(hostname);
}

/**
 * The page's Content-Security-Policy: its own script and sockets, nothing else (its
 * WebTransport is an https: origin of its own, the same host on the UDP port).
 */
function csp(host: string | undefined, webTransportPort?: number): string {
  const clean = host && !/[\s;,']/.test(host) ? host : undefined;
  let sockets = clean ? ` ws://${clean} wss://${clean}` : "";
  if (clean && webTransportPort !== undefined) {
    const hostname = clean.startsWith("[")
      ? clean.slice(0, clean.indexOf("]") + 1)
      : clean.split(":")[0];
    sockets += ` https://${hostname}:${webTransportPort}`;
  }
  return [
    "default-src 'none'",
    "script-src 'self'",
    // The page's own <style> and the one the bundle injects.
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self'",
    "media-src 'self' blob: data:",
    `connect-src 'self'${sockets}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
}

/** An HTTP answer to a refused game connection: status, Retry-After and the reason as JSON. */
function refuse(c: Context, refusal: Refusal): Response {
  if (refusal.retryAfterMs !== undefined) {
    c.header("retry-after", String(Math.max(1, Math.ceil(refusal.retryAfterMs / 1000))));
  }
  c.header("cache-control", "no-store");
  c.header("connection", "close");
  return c.json({ code: refusal.code, reason: refusal.reason }, refusal.status);
}

/** True when a WebSocket from `origin` may connect to a page served at `host`. */
export function originAllowed(
  origin: string | undefined,
  opts: { host: string | undefined; allowed: readonly string[] },
): boolean {
  if (origin === undefined) return true; // not a browser: bots and tools
  if (opts.allowed.includes(origin)) return true;
  try {
    return new URL(origin).host === opts.host;
  } catch {
    return false;
  }
}

/** Builds the app around a running game server. */
export function createApp(server: GameServer, opts: AppOptions): Hono {
  const app = new Hono();
  const allowed = opts.allowedOrigins ?? [];
  const hosts = new Set([
    ...(opts.allowedHosts ?? []).map((h) => h.toLowerCase()),
    ...allowed.flatMap((o) => {
      try {
        return [new URL(o).hostname.toLowerCase()];
      } catch {
        return [];
      }
    }),
  ]);

  app.use(async (c, next) => {
    const host = c.req.header("host");
    if (!hostAllowed(host, hosts)) {
      server.countRefusal("host");
      c.header("connection", "close");
      return c.text(
        `this server does not answer to ${host}: set PUBLIC_ORIGIN or ALLOWED_HOSTS`,
        421,
      );
    }
    await next();
    if (c.res.status === 101) return; // the upgrade's own answer: nothing to add
    const headers = c.res.headers;
    headers.set("content-security-policy", csp(host, opts.webTransport?.()?.port));
    headers.set("x-content-type-options", "nosniff");
    headers.set("referrer-policy", "no-referrer");
    headers.set("x-frame-options", "DENY");
    headers.set("cross-origin-opener-policy", "same-origin");
    return;
  });
  const linkClock = opts.linkClock ?? realClock;
  let linkStreams = 0;

  app.get("/", (c) => c.html(PAGE));
  app.get("/client.js", async (c) => {
    c.header("content-type", "text/javascript; charset=utf-8");
    c.header("cache-control", "no-cache");
    return c.body(await opts.clientJs());
  });
  // Browsers ask for /favicon.ico whatever the page says; both get the same SVG.
  for (const path of ["/favicon.svg", "/favicon.ico"]) {
    app.get(path, (c) => {
      c.header("content-type", "image/svg+xml");
      c.header("cache-control", "public, max-age=86400");
      return c.body(FAVICON_SVG);
    });
  }
  app.get("/transport", (c) => {
    c.header("cache-control", "no-store");
    const offer: TransportOffer = {
      webTransport: opts.webTransport?.() ?? null,
      webSocketPath: "/ws",
    };
    return c.json(offer);
  });
  app.get("/healthz", (c) => {
    const h = health(server);
    return c.json(h, h.ok ? 200 : 503);
  });
  app.get("/metrics", (c) => {
    c.header("content-type", "text/plain; version=0.0.4");
    return c.body(renderMetrics(server, { door: opts.doorStats?.() }));
  });

  app.get("/ws", (c) => {
    const origin = c.req.header("origin");
    if (!originAllowed(origin, { host: c.req.header("host"), allowed })) {
      server.countRefusal("origin");
      return c.json({ code: CloseCode.OriginRefused, reason: "origin not allowed" }, 403);
    }
    const forwarded = opts.trustProxy
      ? c.req.header("x-forwarded-for")?.split(",")[0]?.trim()
      : undefined;
    const door = opts.peerHeader ? c.req.header(opts.peerHeader) : undefined;
    const ip = forwarded || door || getConnInfo(c).remote.address || "unknown";
    const upgrade = c.req.header("upgrade")?.toLowerCase() === "websocket";
    // Refused here, before any upgrade: a refused address costs a 4xx, not a socket.
    const refusal = server.admission(ip, { attempt: upgrade });
    if (refusal) {
      if (upgrade) server.countRefusal(refusal.kind);
      return refuse(c, refusal);
    }
    if (!upgrade) {
      // A page whose socket failed asks here why; nothing stands in its way right now.
      return c.json({ code: 0, reason: "expected a WebSocket upgrade" }, 426);
    }
    let socket: ServerSocket;
    let response: Response;
    try {
      // Deno's WebSocket, or the front door's when the door ends the protocol itself.
      ({ socket, response } = upgradeWebSocket(c.req.raw));
    } catch (err) {
      server.countRefusal("bad_upgrade");
      return c.text(`bad WebSocket upgrade: ${(err as Error).message}`, 400);
    }
    let transport: Transport = new WebSocketTransport(socket, server.scheduler.stats);
    // With a simulated link, what the client sends reaches the server after the path's
    // delay (and what the server sends, through LinkTransport): both directions.
    let down: LinkTransport | undefined;
    let up: LinkPipe<() => void> | undefined;
    if (opts.linkSim) {
      const link = new LinkSim(opts.linkSim, { startMs: linkClock.now(), stream: ++linkStreams });
      down = new LinkTransport(transport, { path: link.down, clock: linkClock });
      up = new LinkPipe(link.up, { clock: linkClock, deliver: (fn) => fn() });
      transport = down;
    }
    // Registered now, not on open: the per-address counts see it from the first moment.
    const conn = server.open(transport, ip, { admitted: true });
    const arrive = (fn: () => void) => up ? up.send(fn) : fn();
    socket.listen({
      message: (data) => arrive(() => conn.receive(data)),
      closed: (code, reason) => {
        // The socket is gone: nothing more can be delivered either way.
        down?.discard();
        up?.clear();
        conn.closed(code, reason || "closed by client");
      },
    });
    return response;
  });
  return app;
}
