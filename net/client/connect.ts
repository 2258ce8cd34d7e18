/**
 * Connects a ClientRuntime to the server, for the browser and the bots alike:
 * WebTransport first when the server offers it and this runtime has it, WebSocket
 * when it is missing, refused or slower than `fallbackAfterMs` to open (UDP
 * blocked). The runtime cannot tell which carries it, except that input goes as
 * datagrams over WebTransport. When the server hands the player to another process
 * (a Transfer), the same runtime moves to a WebSocket there and says hello with the
 * ticket: no reload, one connection as the page sees it; if the target cannot be
 * reached or refuses the ticket, it starts over where it first came in.
 */
import { WEBTRANSPORT } from "../../content/net_tuning.ts";
import { CloseCode, type TransportKind } from "../wire/protocol.ts";
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
}

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

  constructor(address: ServerAddress, opts: ClientOptions) {
    this.#opts = opts;
    this.#home = this.#url = address.webSocketUrl;
    this.runtime = new ClientRuntime({
      ...opts,
      send: (data) => this.#link?.send(data),
      onTransfer: (t) => {
        opts.onTransfer?.(t);
        // The old process closes its connection (4011) once the Transfer is out; move now.
        this.#useWebSocket(t.url, t.ticket);
      },
    });
    this.closed = new Promise((resolve) => this.#resolveClosed = resolve);
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

  close(code = 1000, reason = "bye"): void {
    const link = this.#link;
    if (link) link.close(code, reason);
    this.#finish(code, reason);
  }

  #hello(ticket?: string): void {
    this.runtime.hello(this.#opts.name, this.#opts.now(), { version: this.#opts.version, ticket });
  }

  /** Feeds the runtime a frame of the current link; a message it cannot read closes it. */
  #receive(link: Link, data: Uint8Array): void {
    if (this.#done || link !== this.#link) return;
    try {
      this.runtime.receive(data, this.#opts.now());
    } catch (err) {
      this.#opts.onError?.(err as Error);
      link.close(4000, "client could not decode a server message");
    }
  }

  #finish(code: number, reason: string): void {
    if (this.#done) return;
    this.#done = true;
    this.runtime.closed(reason || `connection closed (${code})`);
    this.#resolveClosed({ code, reason });
  }

  /** Opens a WebSocket to `url` (with a transfer's ticket), replacing any link in use. */
  #useWebSocket(url: string, ticket?: string): void {
    if (this.#done) return;
    let welcomed = false;
    let opened = false;
    const link: Link = openWebSocket(url, {
      onOpen: () => {
        opened = true;
        if (link === this.#link) this.#hello(ticket);
      },
      onData: (data) => {
        welcomed = true;
        this.#receive(link, data);
      },
      onClose: (code, reason) => {
        if (link !== this.#link) return; // superseded by a transfer
        const refused = (ticket !== undefined && !welcomed) || code === CloseCode.BadTicket;
        if (refused && url !== this.#home && !this.#done) {
          // The target is gone or refused the ticket: start over where we first came in.
          this.#useWebSocket(this.#home);
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
    if (previous) previous.close(1000, "transferred");
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
            if (holder.link === this.#link) this.#finish(code, reason);
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
