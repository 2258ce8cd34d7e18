/**
 * The C library's sockets (net/server/native_tcp.ts) against Deno's own clients over
 * real loopback TCP: bytes both ways in order, a write larger than the socket takes at
 * once, pushed reads and their end, half-close, close with reads pending, a busy port,
 * and the address text Deno would give.
 */
import assert from "node:assert/strict";
import { NativeConn, NativeTcp, netAddr, sockaddr } from "../../../net/server/native_tcp.ts";

const onLinux = { ignore: Deno.build.os !== "linux" };

/** A client (Deno's) and the server's end of the same connection (the C library's). */
interface Pair {
  client: Deno.TcpConn;
  conn: NativeConn;
}

/**
 * A Linux-only test with a set listening on a free loopback port and one connection
 * open; `dial` opens more. Everything is closed at the end, whatever the test left open.
 */
function withConnection(
  name: string,
  fn: (pair: Pair, opts: { tcp: NativeTcp; dial(): Promise<Pair> }) => Promise<void>,
): void {
  Deno.test({
    ...onLinux,
    name,
    fn: async () => {
      const tcp = NativeTcp.open();
      assert.ok(tcp, "the C library's sockets open on Linux with FFI allowed");
      const clients: Deno.TcpConn[] = [];
      try {
        const listener = tcp.listen({ hostname: "127.0.0.1", port: 0 });
        assert.ok(listener);
        const dial = async (): Promise<Pair> => {
          const client = await Deno.connect({ hostname: "127.0.0.1", port: listener.addr.port });
          clients.push(client);
          return { client, conn: await listener.accept() };
        };
        await fn(await dial(), { tcp, dial });
      } finally {
        for (const c of clients) {
          try {
            c.close();
          } catch {
            // closed by the test
          }
        }
        tcp.close();
      }
    },
  });
}

async function readExactly(conn: Deno.Conn, n: number): Promise<Uint8Array> {
  const out = new Uint8Array(n);
  for (let at = 0; at < n;) {
    const got = await conn.read(out.subarray(at));
    if (got === null) throw new Error(`ended after ${at} of ${n} bytes`);
    at += got;
  }
  return out;
}

/** `promise`, or a failure after `ms` (a test that would wait forever fails instead). */
async function within<T>(ms: number, promise: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`nothing after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

withConnection(
  "bytes go both ways in order, and the peer's address is the client's",
  async ({ client, conn }) => {
    assert.equal(conn.remoteAddr.hostname, "127.0.0.1");
    assert.equal(conn.remoteAddr.port, client.localAddr.port);
    await client.write(new TextEncoder().encode("hello"));
    const buf = new Uint8Array(64);
    const n = await conn.read(buf);
    assert.equal(new TextDecoder().decode(buf.subarray(0, n!)), "hello");
    assert.equal(await conn.write(new TextEncoder().encode("world")), 5);
    assert.equal(new TextDecoder().decode(await readExactly(client, 5)), "world");
    client.close();
    assert.equal(await conn.read(buf), null, "the client's close reads as the end");
    conn.close();
  },
);

withConnection(
  "writeNow sends the first bytes asked for on the spot, and says when it cannot",
  async ({ client, conn }) => {
    const buf = new TextEncoder().encode("hello, world");
    assert.equal(conn.writeNow(buf, 5), 5);
    assert.equal(new TextDecoder().decode(await readExactly(client, 5)), "hello");
    // Behind a write() still waiting for room, never: its bytes would be passed.
    const big = new Uint8Array(16 * 1024 * 1024);
    const took = await conn.write(big);
    assert.ok(took < big.length, "16 MiB does not fit in the socket at once");
    const rest = conn.write(big.subarray(took));
    assert.equal(conn.writeNow(buf, buf.length), undefined, "a write() waits");
    const reading = within(10_000, readExactly(client, big.length));
    assert.equal(await rest, big.length - took);
    await reading;
    conn.close();
    assert.equal(conn.writeNow(buf, buf.length), undefined, "closed");
  },
);

withConnection(
  "a write larger than the socket takes at once goes out whole, in order, as the peer reads",
  async ({ client, conn }) => {
    const big = new Uint8Array(16 * 1024 * 1024);
    for (let i = 0; i < big.length; i++) big[i] = (i * 31 + (i >> 16)) & 0xff;
    // As the door writes: what the socket took, then the rest.
    const writing = (async () => {
      let calls = 0;
      for (let at = 0; at < big.length; calls++) at += await conn.write(big.subarray(at));
      return calls;
    })();
    const got = await within(10_000, readExactly(client, big.length));
    const calls = await writing;
    assert.ok(calls > 1, "the socket could not take 16 MiB in one call");
    assert.deepEqual(got, big);
  },
);

withConnection(
  "writes that wait for room go out whole and in the order they were made",
  async ({ client, conn }) => {
    // Fill the socket until a write has to wait (the kernel may grow its buffers meanwhile).
    const chunk = new Uint8Array(1 << 20).fill(1);
    let took = 0;
    let waiting: Promise<number> | undefined;
    for (let i = 0; i < 512 && !waiting; i++) {
      const write = conn.write(chunk);
      // Settled already (the socket took some) or left waiting for room.
      const n = await Promise.race([write, Promise.resolve(-1)]);
      if (n < 0) waiting = write;
      else took += n;
    }
    assert.ok(waiting, "512 MiB filled the socket");
    const a = new Uint8Array(3 << 20).fill(2);
    const b = new Uint8Array(5).fill(3);
    const writes = [waiting, conn.write(a), conn.write(b)];
    const got = await within(
      10_000,
      readExactly(client, took + chunk.length + a.length + b.length),
    );
    assert.deepEqual(await Promise.all(writes), [chunk.length, a.length, b.length]);
    const ones = took + chunk.length;
    assert.ok(got.subarray(0, ones).every((x) => x === 1));
    assert.ok(got.subarray(ones, ones + a.length).every((x) => x === 2));
    assert.ok(got.subarray(ones + a.length).every((x) => x === 3));
  },
);

withConnection(
  "pushed reads carry every chunk, then null once at the peer's end",
  async ({ client, conn }) => {
    const chunks: string[] = [];
    let ends = 0;
    const ended = new Promise<void>((done) =>
      conn.onData((chunk) => {
        if (chunk === null) {
          ends++;
          done();
        } else {
          chunks.push(new TextDecoder().decode(chunk));
        }
      })
    );
    await assert.rejects(conn.read(new Uint8Array(8)), /pushes its reads/);
    for (const word of ["one ", "two ", "three"]) {
      await client.write(new TextEncoder().encode(word));
      await new Promise((r) => setTimeout(r, 10));
    }
    client.close();
    await within(10_000, ended);
    assert.equal(chunks.join(""), "one two three");
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(ends, 1, "the end is told once, however many polls see it");
  },
);

Deno.test({
  ...onLinux,
  name: "an owner that throws on its bytes costs its own socket only: the others read on",
  fn: async () => {
    const errors: unknown[] = [];
    const tcp = NativeTcp.open({ onError: (err) => errors.push(err) });
    assert.ok(tcp);
    const listener = tcp.listen({ hostname: "127.0.0.1", port: 0 })!;
    const dial = () => Deno.connect({ hostname: "127.0.0.1", port: listener.addr.port });
    const [bad, good] = [await dial(), await dial()];
    try {
      const [badConn, goodConn] = [await listener.accept(), await listener.accept()];
      badConn.onData((chunk) => {
        if (chunk) throw new Error("a bug in the owner");
      });
      const heard: string[] = [];
      goodConn.onData((chunk) => chunk && heard.push(new TextDecoder().decode(chunk)));
      await bad.write(new TextEncoder().encode("boom"));
      await good.write(new TextEncoder().encode("still here"));
      assert.equal(await bad.read(new Uint8Array(8)), null, "the thrower's socket is closed");
      await good.write(new TextEncoder().encode(", and here"));
      const deadline = Date.now() + 2000;
      while (heard.join("") !== "still here, and here" && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 5));
      }
      assert.equal(heard.join(""), "still here, and here");
      assert.equal(errors.length, 1);
      assert.match(String(errors[0]), /a bug in the owner/);
      assert.equal(badConn.closed, true);
      assert.equal(goodConn.closed, false);
    } finally {
      bad.close();
      good.close();
      tcp.close();
    }
  },
});

withConnection(
  "closeWrite lets the peer read the end after the bytes; close ends a pending read and pushed reads",
  async ({ client: a, conn: connA }, { tcp, dial }) => {
    await connA.write(new TextEncoder().encode("bye"));
    await connA.closeWrite();
    assert.equal(new TextDecoder().decode(await readExactly(a, 3)), "bye");
    assert.equal(await a.read(new Uint8Array(8)), null);
    // Our reading half still works after closeWrite.
    await a.write(new TextEncoder().encode("ok"));
    const buf = new Uint8Array(8);
    assert.equal(await connA.read(buf), 2);
    const pending = connA.read(buf);
    connA.close();
    assert.equal(await pending, null);
    assert.throws(() => connA.close(), Deno.errors.BadResource);
    await assert.rejects(connA.write(buf), Deno.errors.BadResource);

    const { client: b, conn: connB } = await dial();
    const pushedEnd = new Promise<Uint8Array | null>((done) =>
      connB.onData((chunk) => chunk === null && done(chunk))
    );
    connB.close();
    assert.equal(await pushedEnd, null);
    assert.equal(await b.read(new Uint8Array(8)), null, "the peer reads the end");
    assert.equal(tcp.size, 1, "only the listener is left in the set");
  },
);

Deno.test({
  ...onLinux,
  name: "a busy port is AddrInUse; a host name is left to Deno.listen",
  fn: () => {
    const tcp = NativeTcp.open();
    assert.ok(tcp);
    const taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    try {
      assert.throws(
        () => tcp.listen({ hostname: "127.0.0.1", port: taken.addr.port }),
        Deno.errors.AddrInUse,
      );
      assert.equal(tcp.listen({ hostname: "localhost", port: 0 }), undefined);
      assert.equal(tcp.size, 0);
    } finally {
      taken.close();
      tcp.close();
    }
  },
});

Deno.test("addresses read and print as Deno prints them", () => {
  const round = (host: string) => netAddr(sockaddr(host, 4321)!).hostname;
  assert.equal(round("127.0.0.1"), "127.0.0.1");
  assert.equal(round("0.0.0.0"), "0.0.0.0");
  assert.equal(round("::"), "::");
  assert.equal(round("::1"), "::1");
  assert.equal(round("[::1]"), "::1");
  assert.equal(round("2001:db8:0:0:1:0:0:1"), "2001:db8::1:0:0:1");
  assert.equal(round("2001:DB8::"), "2001:db8::");
  assert.equal(round("fe80::1:2:3:4"), "fe80::1:2:3:4");
  assert.equal(round("1:0:2:3:4:5:6:7"), "1:0:2:3:4:5:6:7", "one zero group is not compressed");
  assert.equal(round("::ffff:10.1.2.3"), "::ffff:10.1.2.3");
  assert.equal(netAddr(sockaddr("10.0.0.1", 65535)!).port, 65535);
  for (
    const bad of ["localhost", "1.2.3", "256.1.1.1", "1::2::3", "12345::", "1:2:3:4:5:6:7:8:9"]
  ) {
    assert.equal(sockaddr(bad, 1), undefined, bad);
  }
});
