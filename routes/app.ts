/**
 * The Hono app: the page and its bundle, `/ws` upgraded into a game connection,
 * `/healthz` and `/metrics`. Thin on purpose: the game lives in net/.
 */
import { Hono } from "hono";
import { getConnInfo, upgradeWebSocket } from "hono/deno";
import {
  type GameServer,
  health,
  LinkTransport,
  renderMetrics,
  type Transport,
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
   * A simulated link on every game connection, both ways (LINK_SIM in dev): delay,
   * jitter, stalls. Each connection gets its own path under this spec.
   */
  readonly linkSim?: LinkSpec;
  /** The clock the simulated link runs on (the real one unless a test brings its own). */
  readonly linkClock?: LinkClock;
}

const REAL_LINK_CLOCK: LinkClock = {
  now: () => performance.now(),
  setTimer: (fn, ms) => setTimeout(fn, ms) as unknown as number,
  clearTimer: (id) => clearTimeout(id),
};

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
  const linkClock = opts.linkClock ?? REAL_LINK_CLOCK;
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
  app.get("/healthz", (c) => {
    const h = health(server);
    return c.json(h, h.ok ? 200 : 503);
  });
  app.get("/metrics", (c) => {
    c.header("content-type", "text/plain; version=0.0.4");
    return c.body(renderMetrics(server));
  });

  app.get(
    "/ws",
    (c, next) => {
      const origin = c.req.header("origin");
      if (!originAllowed(origin, { host: c.req.header("host"), allowed })) {
        server.countClose(String(CloseCode.OriginRefused));
        return c.text("origin not allowed", 403);
      }
      return next();
    },
    upgradeWebSocket((c) => {
      const forwarded = opts.trustProxy
        ? c.req.header("x-forwarded-for")?.split(",")[0]?.trim()
        : undefined;
      const ip = forwarded || getConnInfo(c).remote.address || "unknown";
      let conn: ReturnType<GameServer["open"]> | undefined;
      // With a simulated link, what the client sends reaches the server after the path's
      // delay (and what the server sends, through LinkTransport): both directions.
      let down: LinkTransport | undefined;
      let up: LinkPipe<() => void> | undefined;
      const arrive = (fn: () => void) => up ? up.send(fn) : fn();
      return {
        onOpen(_evt, ws) {
          const raw = ws.raw as WebSocket;
          raw.binaryType = "arraybuffer";
          let transport: Transport = new WebSocketTransport(raw);
          if (opts.linkSim) {
            const link = new LinkSim(opts.linkSim, {
              startMs: linkClock.now(),
              stream: ++linkStreams,
            });
            down = new LinkTransport(transport, { path: link.down, clock: linkClock });
            up = new LinkPipe(link.up, { clock: linkClock, deliver: (fn) => fn() });
            transport = down;
          }
          conn = server.open(transport, ip);
        },
        onMessage(evt) {
          const data = evt.data;
          arrive(() => {
            if (typeof data === "string") conn?.receive(data);
            else if (data instanceof ArrayBuffer) conn?.receive(new Uint8Array(data));
            else conn?.close(CloseCode.BadMessage, "unsupported frame type");
          });
        },
        onClose(evt) {
          // The socket is gone: nothing more can be delivered either way.
          down?.discard();
          up?.clear();
          conn?.closed(String(evt.code), evt.reason || "closed by client");
        },
        onError() {
          down?.discard();
          up?.clear();
          conn?.closed("error", "socket error");
        },
      };
    }),
  );
  return app;
}
