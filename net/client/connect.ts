/**
 * Connects a ClientRuntime to the server, for the browser and the bots alike:
 * WebTransport first when the server offers it and this runtime has it, WebSocket
 * when it is missing, refused or slower than `fallbackAfterMs` to open (UDP
 * blocked). The runtime cannot tell which carries it, except that input goes as
 * datagrams over WebTransport. When the server hands the player to another process
 * (a Transfer), the same runtime moves to a WebSocket there and says hello with the
 * ticket: no reload, one connection as the page sees it; if the target cannot be
 * reached or refuses the ticket, it starts over where it first came in.
 *
 * When the link drops (an abnormal close, or 2 s without a word from the server while
 * playing), the runtime freezes ("reconnecting") and new WebSockets say hello with the
 * resume token, at once and then with backoff, until the server takes the session back
 * (same instance, same ship) or the grace the Welcome announced has passed; a process
 * we were transferred to that no longer answers sends us home. In a cluster, a process
 * the load balancer sends the resume to hands it over (a Transfer with reason Resume)
 * to the process that holds the session, and the hello there carries the same token.
 * A server restarting (4009) after we played is retried on a slower policy until the new
 * process answers; a close for cause (a kick, a session taken over elsewhere) ends it for good.
 */
import { WEBTRANSPORT } from "../../content/net_tuning.ts";
import { CloseCode, EnterReason, type TransportKind } from "../wire/protocol.ts";
import { ClientRuntime, type RuntimeOptions } from "./runtime.ts";
import {
  askWhyRefused,
  type Link,
  openWebSocket,
  openWebTransport,
  webTransportAvailable,
  type WebTransportTarget,
  type WireCount,
} from "./ws_client.ts";

/** How to reach a server: what GET /transport offers, with full URLs. */
export interface ServerAddress {
  /** ws:// or wss:// URL of /ws. */
  readonly webSocketUrl: string;
  readonly webTransport?: WebTransportTarget;
}

/** Options of a client connection. */
export interface ClientOptions extends Omit<RuntimeOptions, "send" | "sendDatagram"> {
  readonly name: string;
  readonly now: () => number;
  readonly version?: number;
  /** Skip WebTransport even when offered. */
  readonly webSocketOnly?: boolean;
  /** How long WebTransport may take to open before the WebSocket is tried. */
  readonly fallbackAfterMs?: number;
  /** Called when a server message fails to decode (the connection is then closed). */
  readonly onError?: (err: Error) => void;
  /** Called once a transport is chosen (and why the other was not). */
  readonly onTransport?: (kind: TransportKind, note: string) => void;
  /** A resume token from an earlier page (a reload): the first hello tries to take it back. */
  readonly resume?: string;
  /** How to come back after a dropped link; false: never (the first close is the last). */
  readonly reconnect?: Partial<ReconnectPolicy> | false;
  /**
   * The link dropped and retries began (the page shows "reconnecting…"); `why` is
   * "restart" when the server closed it to restart (4009), "link" otherwise.
   */
  readonly onReconnecting?: (why: ReconnectReason) => void;
  /** A retry got back in (the same session, or a fresh one with a Notice saying why not). */
  readonly onResumed?: () => void;
}

/**
 * Why a client is reconnecting: its link dropped (the session waits), the server is
 * restarting (4009), or it has not answered at all since the session's grace ran out.
 * The last two retry on the restart policy.
 */
export type ReconnectReason = "link" | "restart" | "unreachable";

/** How a client takes its session back after a dropped link. */
export interface ReconnectPolicy {
  /** The first retry goes at once; then this delay, doubling up to maxDelayMs (±20 %). */
  readonly firstDelayMs: number;
  readonly maxDelayMs: number;
  /** No message from the server for this long while playing: the link is taken for dead. */
  readonly silenceMs: number;
  /** A retry whose socket has not opened after this long is abandoned for the next. */
  readonly attemptTimeoutMs: number;
  /** Retries go on for the server's grace plus this much, then the client gives up. */
  readonly giveUpSlackMs: number;
  /**
   * After a restart (4009): the first retry waits this long (the old process is on its
   * way out), then the delay doubles up to restartMaxDelayMs; retries go on for
   * restartGiveUpMs (a drain may take DRAIN_SECONDS, 300 by default, to end).
   */
  readonly restartFirstDelayMs: number;
  readonly restartMaxDelayMs: number;
  readonly restartGiveUpMs: number;
}

/** The defaults: snapshots come 20 times a second, so 2 s of silence is a dead link. */
export const RECONNECT_POLICY: ReconnectPolicy = {
  firstDelayMs: 250,
  maxDelayMs: 2000,
  silenceMs: 2000,
  attemptTimeoutMs: 3000,
  giveUpSlackMs: 5000,
  restartFirstDelayMs: 1000,
  restartMaxDelayMs: 3000,
  restartGiveUpMs: 600_000,
};

/**
 * Server closes that end the game for good: a kick for cause, a version or content
 * mismatch, a full server, a session taken over elsewhere, a server bug. A restart
 * (4009) ends the session but not the game: the client comes back once the server is
 * up again. Anything else (1001, 1005, 1006, idle, backlogged, a failed retry) is a
 * link to take back.
 */
const FINAL_CLOSES: ReadonlySet<number> = new Set([
  1000,
  CloseCode.BadMessage,
  CloseCode.VersionMismatch,
  CloseCode.HandshakeTimeout,
  CloseCode.RateLimited,
  CloseCode.FrameTooLarge,
  CloseCode.ServerFull,
  CloseCode.BadName,
  CloseCode.OriginRefused,
  CloseCode.Replaced,
  CloseCode.ServerError,
]);

/** The close a client sends a link it gave up on: it is resuming on a new one. */
const LINK_LOST = 4900;

/** Retries that never opened, on a process we were transferred to, before going home. */
const MAX_UNOPENED_BEFORE_HOME = 3;

/** A runtime on a connection to the server (the current one, after any transfers). */
export interface GameClient {
  readonly runtime: ClientRuntime;
  /** The transport in use; undefined while WebTransport is still being tried. */
  readonly transport: TransportKind | undefined;
  /** Why WebTransport is not in use, when it is not. */
  readonly fallbackReason: string;
  /** Frames and bytes the chosen link moved (headers included for WebSocket). */
  readonly wire: WireCount;
  /** Resolves once the connection has closed, with the close code and reason. */
  readonly closed: Promise<{ code: number; reason: string }>;
  /** A transport is chosen and has not closed. */
  readonly connected: boolean;
  /** The WebSocket URL in use, or the one a transfer moved to. */
  readonly url: string;
  /** Resumes so far (each a new connection that got back in after a dropped link). */
  readonly resumes: number;
  /** Closes for good (1000 ends the session; another code lets it wait for a resume). */
  close(code?: number, reason?: string): void;
}

/** The former name, from when there was only the WebSocket. */
export type WsClient = GameClient;

/** Opens a connection as `name` and feeds the runtime every message. */
export function connectClient(address: ServerAddress | string, opts: ClientOptions): GameClient {
  return new Connection(
    typeof address === "string" ? { webSocketUrl: address } : address,
    opts,
  );
}

/**
 * Asks the server how to connect (GET /transport) and builds full URLs from `pageUrl`:
 * WebTransport goes to the page's own host name on the offered UDP port.
 */
export async function fetchServerAddress(pageUrl: string): Promise<ServerAddress> {
  const base = new URL(pageUrl);
  const wsBase = `${base.protocol === "https:" ? "wss:" : "ws:"}//${base.host}`;
  try {
    const res = await fetch(new URL("/transport", base));
    if (!res.ok) throw new Error(`status ${res.status}`);
    const offer = await res.json() as {
      webTransport: { port: number; path: string; certificateHashes: string[] } | null;
      webSocketPath: string;
    };
    const wt = offer.webTransport;
    return {
      webSocketUrl: `${wsBase}${offer.webSocketPath}`,
      webTransport: wt
        ? {
          url: `https://${bracketed(base.hostname)}:${wt.port}${wt.path}`,
          certificateHashes: wt.certificateHashes,
        }
        : undefined,
    };
  } catch {
    // An older server, or a proxy that hides the route: the WebSocket still works.
    return { webSocketUrl: `${wsBase}/ws` };
  }
}

function bracketed(hostname: string): string {
  return hostname.includes(":") && !hostname.startsWith("[") ? `[${hostname}]` : hostname;
}

const NO_WIRE: WireCount = { framesIn: 0, framesOut: 0, bytesIn: 0, bytesOut: 0 };

class Connection implements GameClient {
  readonly runtime: ClientRuntime;
  readonly closed: Promise<{ code: number; reason: string }>;
  fallbackReason = "";
  readonly #opts: ClientOptions;
  /** Where this client first came in: where it starts over if a transfer fails. */
  readonly #home: string;
  #url: string;
  #link: Link | undefined;
  #resolveClosed!: (v: { code: number; reason: string }) => void;
  #done = false;
  readonly #policy: ReconnectPolicy;
  /** When the link was lost (-1 while it is fine), retries since, and retries that never opened. */
  #lostAtMs = -1;
  /** Why the retries under way began (meaningful while #lostAtMs ≥ 0). */
  #lostWhy: ReconnectReason = "link";
  #retries = 0;
  #unopened = 0;
  /** Whether the last attempt's socket opened (false: nobody answers at that address). */
  #lastOpened = true;
  #resumes = 0;
  #retryTimer: ReturnType<typeof setTimeout> | undefined;
  readonly #watchdog: ReturnType<typeof setInterval>;

  constructor(address: ServerAddress, opts: ClientOptions) {
    this.#opts = opts;
    this.#home = this.#url = address.webSocketUrl;
    this.runtime = new ClientRuntime({
      ...opts,
      send: (data) => this.#link?.send(data),
      onTransfer: (t) => {
        opts.onTransfer?.(t);
        // The old process closes its connection (4011) once the Transfer is out; move now.
        // A resume handed over (the load balancer sent it to another process of the
        // cluster) carries our own resume token: say hello there with it as a resume.
        this.#useWebSocket(
          t.url,
          t.reason === EnterReason.Resume ? { resume: t.ticket } : { ticket: t.ticket },
        );
      },
    });
    this.closed = new Promise((resolve) => this.#resolveClosed = resolve);
    this.#policy = { ...RECONNECT_POLICY, ...(opts.reconnect || {}) };
    // A silent link is a dead one: a browser may take minutes to notice on its own.
    this.#watchdog = setInterval(() => {
      if (this.#done || this.#lostAtMs >= 0 || this.runtime.phase !== "playing") return;
      if (this.#opts.now() - this.runtime.lastHeardMs > this.#policy.silenceMs) this.#linkLost();
    }, Math.min(250, this.#policy.silenceMs / 4));
    const wt = address.webTransport;
    if (!wt || opts.webSocketOnly) {
      this.fallbackReason = opts.webSocketOnly
        ? "WebSocket asked for"
        : "the server offers no WebTransport";
      this.#useWebSocket(address.webSocketUrl);
    } else if (!webTransportAvailable()) {
      this.fallbackReason = "this browser has no WebTransport";
      this.#useWebSocket(address.webSocketUrl);
    } else {
      this.#tryWebTransport(wt, address.webSocketUrl);
    }
  }

  get transport(): TransportKind | undefined {
    return this.#link?.kind;
  }

  get connected(): boolean {
    return this.#link !== undefined && !this.#done;
  }

  get url(): string {
    return this.#url;
  }

  get wire(): WireCount {
    return this.#link?.wire ?? NO_WIRE;
  }

  get resumes(): number {
    return this.#resumes;
  }

  close(code = 1000, reason = "bye"): void {
    const link = this.#link;
    if (link) link.close(code, reason);
    this.#finish(code, reason);
  }

  /** The first hello of a page may carry a token from before a reload. */
  #firstHello = true;

  #hello(via: { ticket?: string; resume?: string } = {}): void {
    const resume = via.resume ?? (this.#firstHello ? this.#opts.resume : undefined);
    this.#firstHello = false;
    this.runtime.hello(this.#opts.name, this.#opts.now(), {
      version: this.#opts.version,
      ticket: via.ticket,
      resume,
    });
  }

  /**
   * The link is gone: freeze, then retry with the resume token until back or too late.
   * After a restart the retries wait longer and go on longer: the session is gone, but
   * the server comes back, and the token says what became of it (a run that lives on
   * elsewhere in a cluster is resumed; else a fresh hub, with a Notice saying why).
   */
  #linkLost(why: ReconnectReason = "link", opts: { opened?: boolean } = {}): void {
    if (this.#done) return;
    const now = this.#opts.now();
    if (opts.opened !== undefined) this.#lastOpened = opts.opened;
    // The grace is over and the server does not even answer (its process is gone, and
    // its close frame with it): that is a restart, or an outage; wait for it as one.
    const overdue = this.#lostAtMs >= 0 && this.#lostWhy === "link" && !this.#lastOpened &&
      now - this.#lostAtMs > this.runtime.graceMs + this.#policy.giveUpSlackMs;
    if (overdue) why = "unreachable";
    if (this.#lostAtMs < 0 || (why !== "link" && this.#lostWhy !== why)) {
      if (this.#lostAtMs < 0) this.runtime.reconnecting();
      this.#lostAtMs = now;
      this.#lostWhy = why;
      this.#retries = 0;
      this.#unopened = 0;
      this.#opts.onReconnecting?.(why);
    }
    const p = this.#policy;
    const restart = this.#lostWhy !== "link";
    const giveUpMs = restart ? p.restartGiveUpMs : this.runtime.graceMs + p.giveUpSlackMs;
    if (now - this.#lostAtMs > giveUpMs) {
      this.#link?.close(LINK_LOST, "giving up");
      this.#finish(
        1006,
        this.#lostWhy === "restart"
          ? "the server restarted and did not come back"
          : restart
          ? "the server stopped answering"
          : "connection lost, and it did not come back in time",
      );
      return;
    }
    const [first, max] = restart
      ? [p.restartFirstDelayMs, p.restartMaxDelayMs]
      : [p.firstDelayMs, p.maxDelayMs];
    const backoff = this.#retries === 0 && !restart
      ? 0
      : Math.min(max, first * 2 ** Math.max(0, this.#retries - (restart ? 0 : 1))) *
        (0.8 + 0.4 * Math.random());
    this.#retries++;
    // A process we were transferred to that will not even answer is gone (a cluster lost
    // it): go back to where we first came in, where the token is told what became of us.
    const target = this.#url !== this.#home && this.#unopened >= MAX_UNOPENED_BEFORE_HOME
      ? this.#home
      : this.#url;
    clearTimeout(this.#retryTimer);
    this.#retryTimer = setTimeout(
      () => this.#useWebSocket(target, { resume: this.runtime.resumeToken }),
      backoff,
    );
  }

  /** Feeds the runtime a frame of the current link; a message it cannot read closes it. */
  #receive(link: Link, data: Uint8Array): void {
    if (this.#done || link !== this.#link) return;
    try {
      this.runtime.receive(data, this.#opts.now());
    } catch (err) {
      this.#opts.onError?.(err as Error);
      link.close(4000, "client could not decode a server message");
      return;
    }
    if (this.#lostAtMs >= 0 && this.runtime.phase === "playing") {
      // Welcomed back (the same session, or a fresh one with a Notice saying why not).
      this.#lostAtMs = -1;
      this.#resumes++;
      this.#opts.onResumed?.();
    }
  }

  /**
   * Whether a close of the current link is a drop to take back rather than the end, and
   * why: a restart (4009) of a server we played on, or any other drop of a link in play.
   */
  #retryAfter(code: number): ReconnectReason | undefined {
    const inPlay = this.runtime.resumeToken !== undefined &&
      (this.#lostAtMs >= 0 || this.runtime.phase === "playing");
    if (this.#opts.reconnect === false || !inPlay) return undefined;
    // The Reject before the close says it too: a process that exits at once may leave
    // the socket to end as a bare 1006 before its close frame is read, and so may a
    // server that closed us for good (Deno drops a socket that receives data after its
    // close: an input in flight is enough). A retry then would resume what the server
    // ended, or take the session back from the tab that replaced us.
    const said = this.runtime.rejectCode;
    if (code === CloseCode.ServerRestarting || said === CloseCode.ServerRestarting) {
      return "restart";
    }
    return FINAL_CLOSES.has(code) || (said !== undefined && FINAL_CLOSES.has(said))
      ? undefined
      : "link";
  }

  #finish(code: number, reason: string): void {
    if (this.#done) return;
    this.#done = true;
    clearInterval(this.#watchdog);
    clearTimeout(this.#retryTimer);
    this.runtime.closed(reason || `connection closed (${code})`);
    this.#resolveClosed({ code, reason });
  }

  /**
   * Opens a WebSocket to `url` (with a transfer's ticket, or a resume token), replacing
   * any link in use.
   */
  #useWebSocket(url: string, via: { ticket?: string; resume?: string } = {}): void {
    if (this.#done) return;
    const ticket = via.ticket;
    let welcomed = false;
    let opened = false;
    // A retry that hangs (the link is still down) is dropped for the next one.
    const attemptTimer = this.#lostAtMs >= 0
      ? setTimeout(() => {
        if (!opened && link === this.#link) link.close(LINK_LOST, "no answer");
      }, this.#policy.attemptTimeoutMs)
      : undefined;
    const link: Link = openWebSocket(url, {
      onOpen: () => {
        opened = true;
        clearTimeout(attemptTimer);
        if (link === this.#link) this.#hello(via);
      },
      onData: (data) => {
        welcomed = true;
        this.#receive(link, data);
      },
      onClose: (code, reason) => {
        clearTimeout(attemptTimer);
        if (link !== this.#link || this.#done) return; // superseded by a transfer or a retry
        const refused = (ticket !== undefined && !welcomed) || code === CloseCode.BadTicket;
        if (refused && url !== this.#home) {
          // The target is gone or refused the ticket: start over where we first came in.
          this.#useWebSocket(this.#home);
          return;
        }
        const retry = this.#retryAfter(code);
        if (retry) {
          if (!opened) this.#unopened++;
          this.#linkLost(retry, { opened });
          return;
        }
        if (opened) {
          this.#finish(code, reason);
          return;
        }
        // Refused before the upgrade, a socket only sees 1006: the server says why on a GET.
        askWhyRefused(url).then((refusal) => {
          if (refusal) this.runtime.refused(refusal.reason);
          this.#finish(refusal?.code ?? code, refusal?.reason ?? reason);
        });
      },
    });
    const previous = this.#link;
    this.#link = link;
    this.#url = url;
    this.runtime.useDatagrams(undefined);
    // A link given up on must not say 1000 to the server: that would end the session.
    if (previous) {
      previous.close(ticket !== undefined ? 1000 : LINK_LOST, "moved to a new connection");
    }
    this.#opts.onTransport?.("websocket", this.fallbackReason);
  }

  async #tryWebTransport(target: WebTransportTarget, webSocketUrl: string): Promise<void> {
    const timeoutMs = this.#opts.fallbackAfterMs ?? WEBTRANSPORT.fallbackAfterMs;
    try {
      const holder: { link?: Link } = {};
      const link = await openWebTransport(target, {
        timeoutMs,
        events: {
          onOpen: () => {},
          onData: (data) => holder.link && this.#receive(holder.link, data),
          onClose: (code, reason) => {
            if (holder.link !== this.#link || this.#done) return;
            // A dropped WebTransport session is taken back over a WebSocket.
            const retry = this.#retryAfter(code);
            if (retry) this.#linkLost(retry);
            else this.#finish(code, reason);
          },
        },
      });
      holder.link = link;
      if (this.#done || this.#link) {
        link.close(1000, "closed while opening");
        return;
      }
      this.#link = link;
      this.runtime.useDatagrams(link.sendDatagram);
      this.#opts.onTransport?.("webtransport", "");
      this.#hello();
    } catch (err) {
      this.fallbackReason = `WebTransport failed: ${(err as Error).message}`;
      this.#useWebSocket(webSocketUrl);
    }
  }
}
