/**
 * TCP for the front door through the C library (Linux, over Deno's FFI): non-blocking
 * sockets in one epoll set, polled by the process itself: by the game loop just before
 * each tick (`poll()`; main.ts wires it), so the inputs that arrived are read right
 * before the tick that uses them, and by a timer when nothing else polled for `pollMs`.
 *
 * Why: a loaded server reads ~15 and writes ~20 small messages a second for every
 * client. Through Deno's sockets each read is an async op with a promise that waits,
 * often for tens of milliseconds, long enough to outlive a young-generation collection,
 * and each write another op. Here a write is one `send` system call made on the spot,
 * and a game socket's reads are pushed to it from the poll (`onData`): one `epoll_wait`
 * finds every connection with bytes waiting, and each gets one `recv`, with no promise
 * in between. `deno task io-floor --native` measures both ways.
 *
 * The classes answer the part of Deno's TcpListener and TcpConn the door uses, so the
 * door runs on either. `NativeTcp.open()` is undefined where this cannot work (another
 * OS or CPU, no FFI permission, no libc): the door then uses Deno's sockets.
 */
import { ipv4Bytes, ipv6Groups } from "./admission.ts";
import { openLibc } from "./libc.ts";

const EPOLLIN = 0x1;
const EPOLLOUT = 0x4;
const EPOLLERR = 0x8;
const EPOLLHUP = 0x10;
const EPOLL_CTL_ADD = 1;
const EPOLL_CTL_DEL = 2;
const EPOLL_CTL_MOD = 3;
const EPOLL_CLOEXEC = 0o2000000;
const AF_INET = 2;
const AF_INET6 = 10;
const SOCK_STREAM = 1;
const SOCK_NONBLOCK = 0o4000;
const SOCK_CLOEXEC = 0o2000000;
const SOL_SOCKET = 1;
const SO_REUSEADDR = 2;
const IPPROTO_TCP = 6;
const TCP_NODELAY = 1;
const MSG_DONTWAIT = 0x40;
const MSG_NOSIGNAL = 0x4000;
const SHUT_WR = 1;
const EINTR = 4;
const EAGAIN = 11;

/**
 * How long the sockets go unpolled before the timer polls them, by default: a read waits
 * at most this long (plus a timer's lateness). Each poll costs a turn of the event loop,
 * so a server whose loop polls every tick sets more (main.ts: a tick and a bit).
 */
export const POLL_MS = 2;
/** …and with only listeners in the set, at least this long: a new connection waits for it. */
const IDLE_POLL_MS = 10;
/** Events taken per epoll_wait; a poll takes up to four batches before yielding. */
const MAX_EVENTS = 512;
/**
 * Bytes a pushed read takes at once (a game socket's frames are far smaller), into one
 * buffer all connections share: a chunk is read within its callback, before the next recv.
 */
const PUSH_BYTES = 16 * 1024;

const SYMBOLS = {
  socket: { parameters: ["i32", "i32", "i32"], result: "i32" },
  setsockopt: { parameters: ["i32", "i32", "i32", "buffer", "u32"], result: "i32" },
  bind: { parameters: ["i32", "buffer", "u32"], result: "i32" },
  listen: { parameters: ["i32", "i32"], result: "i32" },
  getsockname: { parameters: ["i32", "buffer", "buffer"], result: "i32" },
  accept4: { parameters: ["i32", "buffer", "buffer", "i32"], result: "i32" },
  // A size_t length passed as u32 (zero-extended into its register on both CPUs), and
  // the ssize_t read as i32: a buffer here is far under 2 GiB, and a failure is -1.
  recv: { parameters: ["i32", "buffer", "u32", "i32"], result: "i32" },
  send: { parameters: ["i32", "buffer", "u32", "i32"], result: "i32" },
  shutdown: { parameters: ["i32", "i32"], result: "i32" },
  close: { parameters: ["i32"], result: "i32" },
  epoll_create1: { parameters: ["i32"], result: "i32" },
  epoll_ctl: { parameters: ["i32", "i32", "i32", "buffer"], result: "i32" },
  epoll_wait: { parameters: ["i32", "buffer", "i32", "i32"], result: "i32" },
  __errno_location: { parameters: [], result: "pointer" },
} as const;

type Libc = Deno.DynamicLibrary<typeof SYMBOLS>["symbols"];

/** Something registered in the epoll set. */
interface Pollable {
  ready(events: number): void;
}

/** An error of a system call, with its errno. */
export class SocketError extends Error {
  constructor(readonly call: string, readonly errno: number) {
    super(`${call} failed (errno ${errno})`);
  }
}

/** One epoll set, its poll timer, and the sockets in it. */
export class NativeTcp {
  readonly #c: Libc;
  readonly #lib: Deno.DynamicLibrary<typeof SYMBOLS>;
  readonly #ep: number;
  /** epoll_event: packed (12 bytes) on x86-64, 16 with its data at 8 on arm64. */
  readonly #eventBytes: number;
  readonly #dataAt: number;
  readonly #event: Uint8Array;
  readonly #eventView: DataView;
  readonly #events: Uint8Array;
  readonly #eventsView: DataView;
  readonly #errno: Deno.UnsafePointerView;
  readonly #handles = new Map<number, Pollable>();
  /** Where pushed reads land (see PUSH_BYTES). */
  readonly pushBuffer = new Uint8Array(PUSH_BYTES);
  /** Connections in the set (the rest are listeners). */
  #conns = 0;
  readonly #pollMs: number;
  readonly #onError: (err: unknown) => void;
  #timer: ReturnType<typeof setTimeout> | undefined;

  private constructor(
    lib: Deno.DynamicLibrary<typeof SYMBOLS>,
    opts: { pollMs: number; onError: (err: unknown) => void },
  ) {
    this.#lib = lib;
    this.#pollMs = opts.pollMs;
    this.#onError = opts.onError;
    this.#c = lib.symbols;
    this.#eventBytes = Deno.build.arch === "x86_64" ? 12 : 16;
    this.#dataAt = Deno.build.arch === "x86_64" ? 4 : 8;
    this.#event = new Uint8Array(this.#eventBytes);
    this.#eventView = new DataView(this.#event.buffer);
    this.#events = new Uint8Array(this.#eventBytes * MAX_EVENTS);
    this.#eventsView = new DataView(this.#events.buffer);
    const at = this.#c.__errno_location();
    if (at === null) throw new Error("no errno location");
    this.#errno = new Deno.UnsafePointerView(at);
    this.#ep = this.#c.epoll_create1(EPOLL_CLOEXEC);
    if (this.#ep < 0) throw new SocketError("epoll_create1", this.errno());
  }

  /**
   * The C library's sockets, or undefined where they cannot be had (see the file's note).
   * `onError` hears what a socket's owner threw while handling its bytes (that socket is
   * closed; the others read on); by default it goes to console.error.
   */
  static open(
    opts: { pollMs?: number; onError?: (err: unknown) => void } = {},
  ): NativeTcp | undefined {
    // epoll_event's layout is known for these two.
    if (Deno.build.arch !== "x86_64" && Deno.build.arch !== "aarch64") return undefined;
    const lib = openLibc(SYMBOLS);
    if (!lib) return undefined;
    try {
      return new NativeTcp(lib, {
        pollMs: opts.pollMs ?? POLL_MS,
        onError: opts.onError ?? ((err) => console.error("native socket:", err)),
      });
    } catch {
      lib.close();
      return undefined;
    }
  }

  /** The C library's calls (for the sockets of this set). */
  get c(): Libc {
    return this.#c;
  }

  /** errno of the last failed call (read at once: the next call may change it). */
  errno(): number {
    return this.#errno.getInt32(0);
  }

  /** Sockets in the set. */
  get size(): number {
    return this.#handles.size;
  }

  /**
   * Listens on an IP literal (IPv4 or IPv6; undefined for a name such as "localhost",
   * which Deno.listen resolves).
   */
  listen(opts: { hostname: string; port: number }): NativeListener | undefined {
    const addr = sockaddr(opts.hostname, opts.port);
    if (!addr) return undefined;
    const c = this.#c;
    const fd = c.socket(
      addr[0] === AF_INET ? AF_INET : AF_INET6,
      SOCK_STREAM | SOCK_NONBLOCK |
        SOCK_CLOEXEC,
      0,
    );
    if (fd < 0) throw new SocketError("socket", this.errno());
    try {
      c.setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, new Int32Array([1]), 4);
      if (c.bind(fd, addr, addr.byteLength) !== 0) throw bindError(this.errno(), opts);
      if (c.listen(fd, 1024) !== 0) throw new SocketError("listen", this.errno());
      const bound = new Uint8Array(28);
      c.getsockname(fd, bound, new Uint32Array([28]));
      const listener = new NativeListener(this, fd, netAddr(bound));
      this.register(fd, listener);
      return listener;
    } catch (err) {
      c.close(fd);
      throw err;
    }
  }

  /** Adds `fd` to the set, watching `events`. */
  register(fd: number, handle: Pollable, events = EPOLLIN): void {
    this.#ctl(EPOLL_CTL_ADD, fd, events);
    this.#handles.set(fd, handle);
    if (handle instanceof NativeConn) this.#conns++;
    if (this.#timer === undefined) this.#arm();
  }

  /** Changes what `fd` is watched for. */
  watch(fd: number, events: number): void {
    this.#ctl(EPOLL_CTL_MOD, fd, events);
  }

  /** Takes `fd` out of the set and closes it. */
  release(fd: number): void {
    const handle = this.#handles.get(fd);
    if (handle === undefined) return;
    if (handle instanceof NativeConn) this.#conns--;
    this.#handles.delete(fd);
    this.#ctl(EPOLL_CTL_DEL, fd, 0);
    this.#c.close(fd);
  }

  #ctl(op: number, fd: number, events: number): void {
    const v = this.#eventView;
    v.setUint32(0, events, true);
    v.setUint32(this.#dataAt, fd, true);
    if (this.#c.epoll_ctl(this.#ep, op, fd, this.#event) !== 0 && op !== EPOLL_CTL_DEL) {
      throw new SocketError("epoll_ctl", this.errno());
    }
  }

  /**
   * Hands every ready socket its events. A handle may close sockets (its own or
   * others') meanwhile, and a closed descriptor's number may be reused by an accept in
   * the same batch: every handle takes a readiness that turns out to be none in stride.
   */
  poll(): void {
    const v = this.#eventsView;
    for (let batch = 0; batch < 4; batch++) {
      const n = this.#c.epoll_wait(this.#ep, this.#events, MAX_EVENTS, 0);
      for (let k = 0; k < n; k++) {
        const at = k * this.#eventBytes;
        const handle = this.#handles.get(v.getUint32(at + this.#dataAt, true));
        if (handle === undefined) continue;
        try {
          handle.ready(v.getUint32(at, true));
        } catch (err) {
          // One socket's trouble costs that socket (its owner hears the end), never the
          // others' reads or the process.
          this.#onError(err);
          if (handle instanceof NativeConn && !handle.closed) handle.close();
        }
      }
      if (n < MAX_EVENTS) break;
    }
    this.#arm();
  }

  /** The timer's next poll, `pollMs` from now (none while the set is empty). */
  #arm(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#handles.size === 0) return;
    const ms = this.#conns > 0 ? this.#pollMs : Math.max(this.#pollMs, IDLE_POLL_MS);
    this.#timer = setTimeout(this.#onTimer, ms);
  }

  readonly #onTimer = (): void => {
    this.#timer = undefined;
    this.poll();
  };

  /** Closes every socket and the set (the sockets' owners hear of it as a close). */
  close(): void {
    for (const [fd, handle] of [...this.#handles]) {
      if (handle instanceof NativeConn || handle instanceof NativeListener) handle.close();
      else this.release(fd);
    }
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#c.close(this.#ep);
    this.#lib.close();
  }
}

/** A listening socket: `accept()` as Deno's listener has it. */
export class NativeListener implements Pollable {
  readonly addr: Deno.NetAddr;
  readonly #tcp: NativeTcp;
  readonly #fd: number;
  readonly #queue: NativeConn[] = [];
  #waiter: { resolve(conn: NativeConn): void; reject(err: Error): void } | undefined;
  #closed = false;
  readonly #peer = new Uint8Array(28);
  readonly #peerLen = new Uint32Array(1);

  constructor(tcp: NativeTcp, fd: number, addr: Deno.NetAddr) {
    this.#tcp = tcp;
    this.#fd = fd;
    this.addr = addr;
  }

  /** The next connection (rejects once the listener is closed). */
  accept(): Promise<NativeConn> {
    const next = this.#queue.shift();
    if (next) return Promise.resolve(next);
    if (this.#closed) return Promise.reject(new Deno.errors.BadResource("listener closed"));
    if (this.#waiter) return Promise.reject(new Error("an accept is already pending"));
    return new Promise((resolve, reject) => this.#waiter = { resolve, reject });
  }

  ready(): void {
    const c = this.#tcp.c;
    for (;;) {
      this.#peerLen[0] = 28;
      const fd = c.accept4(this.#fd, this.#peer, this.#peerLen, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) return; // EAGAIN: none left; anything else is the next poll's to retry
      const conn = new NativeConn(this.#tcp, fd, {
        remoteAddr: netAddr(this.#peer),
        localAddr: this.addr,
      });
      const waiter = this.#waiter;
      this.#waiter = undefined;
      if (waiter) waiter.resolve(conn);
      else this.#queue.push(conn);
    }
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#tcp.release(this.#fd);
    for (const conn of this.#queue.splice(0)) conn.close();
    this.#waiter?.reject(new Deno.errors.BadResource("listener closed"));
    this.#waiter = undefined;
  }
}

/**
 * A connection: Deno's read/write/closeWrite/close, plus `onData`, which hands every
 * chunk to a callback as the poll finds it (no read pending in between).
 */
export class NativeConn implements Pollable {
  readonly remoteAddr: Deno.NetAddr;
  readonly localAddr: Deno.NetAddr;
  readonly #tcp: NativeTcp;
  readonly #fd: number;
  #closed = false;
  /** Read to the end (or the connection failed): every read from now on is null. */
  #ended = false;
  /** What the set watches this socket for. */
  #watching = EPOLLIN;
  #reader: { buf: Uint8Array; resolve(n: number | null): void } | undefined;
  #push: { buf: Uint8Array; onData(chunk: Uint8Array | null): void } | undefined;
  /** Writes waiting for room, in order; each goes out whole before the next begins. */
  readonly #writers: {
    bytes: Uint8Array;
    sent: number;
    resolve(n: number): void;
    reject(err: Error): void;
  }[] = [];

  constructor(
    tcp: NativeTcp,
    fd: number,
    addrs: { remoteAddr: Deno.NetAddr; localAddr: Deno.NetAddr },
  ) {
    this.#tcp = tcp;
    this.#fd = fd;
    this.remoteAddr = addrs.remoteAddr;
    this.localAddr = addrs.localAddr;
    // Small frames go out as they are written: a game sends one per tick per client.
    tcp.c.setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, new Int32Array([1]), 4);
    tcp.register(fd, this);
  }

  /** Closed by its owner (or by the set, after its owner threw). */
  get closed(): boolean {
    return this.#closed;
  }

  /** Bytes into `buf`: their count, or null at the end (or once closed). */
  read(buf: Uint8Array): Promise<number | null> {
    if (this.#push) return Promise.reject(new Error("the connection pushes its reads"));
    if (this.#reader) return Promise.reject(new Error("a read is already pending"));
    const n = this.#recv(buf);
    if (n !== undefined) return Promise.resolve(n);
    this.#watch(EPOLLIN | (this.#watching & EPOLLOUT));
    return new Promise((resolve) => this.#reader = { buf, resolve });
  }

  /**
   * From now on every chunk goes to `onData` as the poll finds it, then null once at the
   * end (or a failure). The chunk is a view of a buffer the next one overwrites.
   */
  onData(onData: (chunk: Uint8Array | null) => void): void {
    if (this.#reader) throw new Error("a read is pending");
    this.#push = { buf: this.#tcp.pushBuffer, onData };
    if (this.#ended) {
      queueMicrotask(() => onData(null));
      return;
    }
    this.#watch(EPOLLIN | (this.#watching & EPOLLOUT));
  }

  /**
   * Writes what the socket takes now (maybe part, as Deno's write may); when it takes
   * nothing, or other writes wait, this one waits its turn and then goes out whole.
   */
  write(bytes: Uint8Array): Promise<number> {
    if (this.#closed) return Promise.reject(new Deno.errors.BadResource("connection closed"));
    if (this.#writers.length === 0) {
      const n = this.#send(bytes);
      if (typeof n === "number") return Promise.resolve(n);
      if (n instanceof Error) return Promise.reject(n);
    }
    this.#watch(this.#watching | EPOLLOUT);
    return new Promise((resolve, reject) =>
      this.#writers.push({ bytes, sent: 0, resolve, reject })
    );
  }

  /**
   * Writes the first `length` bytes of `bytes` on the spot, with no promise: the count
   * the socket took (maybe fewer), or undefined when it cannot so (a write() still
   * waits, or the send failed or would block: write() then queues it or says why).
   */
  writeNow(bytes: Uint8Array, length: number): number | undefined {
    if (this.#closed || this.#writers.length > 0) return undefined;
    const n = this.#send(bytes, length);
    return typeof n === "number" ? n : undefined;
  }

  /** Ends our writing half: the peer reads the end after what was written. */
  closeWrite(): Promise<void> {
    if (this.#closed) return Promise.reject(new Deno.errors.BadResource("connection closed"));
    if (this.#tcp.c.shutdown(this.#fd, SHUT_WR) !== 0) {
      return Promise.reject(new SocketError("shutdown", this.#tcp.errno()));
    }
    return Promise.resolve();
  }

  /** Closes the socket: a pending read gets null (pushed reads a null, next), pending writes fail. */
  close(): void {
    if (this.#closed) throw new Deno.errors.BadResource("connection closed");
    this.#closed = true;
    const ended = this.#ended;
    this.#ended = true;
    this.#tcp.release(this.#fd);
    this.#reader?.resolve(null);
    this.#reader = undefined;
    const push = this.#push;
    if (push && !ended) queueMicrotask(() => push.onData(null));
    for (const w of this.#writers.splice(0)) w.reject(new Deno.errors.BadResource("closed"));
  }

  ready(events: number): void {
    if (this.#closed) return;
    if (events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) this.#flushWriters();
    if (this.#closed) return;
    if (events & (EPOLLIN | EPOLLERR | EPOLLHUP)) this.#readable();
  }

  #readable(): void {
    const push = this.#push;
    if (push) {
      // One recv, more only while it fills the buffer: what is left comes next poll.
      for (;;) {
        const n = this.#recv(push.buf);
        if (n === undefined) return;
        if (n === null) {
          this.#stopReading();
          push.onData(null);
          return;
        }
        push.onData(push.buf.subarray(0, n));
        if (this.#closed || n < push.buf.byteLength) return;
      }
    }
    const reader = this.#reader;
    if (!reader) {
      // Nobody is reading: stop hearing of it until someone does (it is level-triggered).
      this.#watch(this.#watching & EPOLLOUT);
      return;
    }
    const n = this.#recv(reader.buf);
    if (n === undefined) return;
    this.#reader = undefined;
    if (n === null) this.#stopReading();
    reader.resolve(n);
  }

  /** After the end: the set stops reporting it (an ended socket stays readable forever). */
  #stopReading(): void {
    this.#watch(this.#watching & EPOLLOUT);
  }

  #flushWriters(): void {
    while (this.#writers.length > 0) {
      const w = this.#writers[0];
      const n = this.#send(w.sent === 0 ? w.bytes : w.bytes.subarray(w.sent));
      if (n === undefined) return;
      if (n instanceof Error) {
        for (const rest of this.#writers.splice(0)) rest.reject(n);
        break;
      }
      w.sent += n;
      if (w.sent < w.bytes.byteLength) return; // the rest when there is room again
      this.#writers.shift();
      w.resolve(w.bytes.byteLength);
    }
    if (!this.#closed) this.#watch(this.#watching & ~EPOLLOUT);
  }

  /** recv: a count, null at the end or on a failure, undefined when nothing is waiting. */
  #recv(buf: Uint8Array): number | null | undefined {
    if (this.#ended) return null;
    const n = this.#tcp.c.recv(this.#fd, buf, buf.byteLength, MSG_DONTWAIT);
    if (n > 0) return n;
    if (n < 0) {
      const errno = this.#tcp.errno();
      if (errno === EAGAIN || errno === EINTR) return undefined;
    }
    // 0 is the end; any other failure (a reset) ends the reading as well.
    this.#ended = true;
    return null;
  }

  /** send: a count, undefined when the socket takes nothing now, or the failure. */
  #send(bytes: Uint8Array, length = bytes.byteLength): number | Error | undefined {
    if (this.#closed) return new Deno.errors.BadResource("connection closed");
    if (length === 0) return 0;
    const n = this.#tcp.c.send(this.#fd, bytes, length, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n >= 0) return n;
    const errno = this.#tcp.errno();
    if (errno === EAGAIN || errno === EINTR) return undefined;
    return new SocketError("send", errno);
  }

  #watch(events: number): void {
    if (this.#closed || events === this.#watching) return;
    this.#watching = events;
    this.#tcp.watch(this.#fd, events);
  }
}

function bindError(errno: number, opts: { hostname: string; port: number }): Error {
  const where = `${opts.hostname}:${opts.port}`;
  // EADDRINUSE, EADDRNOTAVAIL, EACCES: the same errors Deno.listen throws.
  if (errno === 98) return new Deno.errors.AddrInUse(`address in use: ${where}`);
  if (errno === 99) return new Deno.errors.AddrNotAvailable(`address not available: ${where}`);
  if (errno === 13) return new Deno.errors.PermissionDenied(`cannot bind ${where}`);
  return new SocketError("bind", errno);
}

/** A sockaddr_in or sockaddr_in6 for an IP literal, or undefined for anything else. */
export function sockaddr(hostname: string, port: number): Uint8Array | undefined {
  const host = hostname.startsWith("[") && hostname.endsWith("]")
    ? hostname.slice(1, -1)
    : hostname;
  const v4 = ipv4Bytes(host);
  if (v4) {
    const out = new Uint8Array(16);
    out[0] = AF_INET; // sa_family is host order: little-endian on both supported CPUs
    out[2] = port >> 8;
    out[3] = port & 0xff;
    out.set(v4, 4);
    return out;
  }
  // A zone ("fe80::1%eth0") would need its interface's index: left to Deno.listen.
  const v6 = host.includes("%") ? undefined : ipv6Groups(host);
  if (!v6) return undefined;
  const out = new Uint8Array(28);
  out[0] = AF_INET6;
  out[2] = port >> 8;
  out[3] = port & 0xff;
  v6.forEach((g, i) => {
    out[8 + 2 * i] = g >> 8;
    out[9 + 2 * i] = g & 0xff;
  });
  return out;
}

/** The address in a sockaddr, as Deno reports one. */
export function netAddr(sa: Uint8Array): Deno.NetAddr {
  const port = (sa[2] << 8) | sa[3];
  if (sa[0] === AF_INET) {
    return { transport: "tcp", hostname: sa.subarray(4, 8).join("."), port };
  }
  return { transport: "tcp", hostname: formatIpv6(sa.subarray(8, 24)), port };
}

/** RFC 5952 text (an IPv4-mapped address as ::ffff:a.b.c.d), as Deno prints addresses. */
function formatIpv6(b: Uint8Array): string {
  const g: number[] = [];
  for (let i = 0; i < 8; i++) g.push((b[2 * i] << 8) | b[2 * i + 1]);
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) {
    return `::ffff:${b[12]}.${b[13]}.${b[14]}.${b[15]}`;
  }
  // The longest run of two or more zero groups (the first of equals) becomes "::".
  let best = -1, bestLen = 1;
  for (let i = 0; i < 8;) {
    if (g[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && g[j] === 0) j++;
    if (j - i > bestLen) [best, bestLen] = [i, j - i];
    i = j;
  }
  const hex = (xs: number[]) => xs.map((x) => x.toString(16)).join(":");
  if (best < 0) return hex(g);
  return `${hex(g.slice(0, best))}::${hex(g.slice(best + bestLen))}`;
}
