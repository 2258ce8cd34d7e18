/**
 * What WebTransport puts on the wire, packet by packet: the real server process
 * (BOSS_RUSH=1, so four bots are at the Warden within seconds) and four bots, each
 * behind a counting UDP relay. Over `--seconds` of the boss fight it prints, per
 * direction and per client, packets and wire bytes a second (UDP/IP included) and
 * a histogram of packet sizes, which tells ack-only packets (30–39 B) from those
 * that carry data. With --websocket the bots use WebSockets instead and it prints
 * the kernel's own count of the server's TCP segments (`ss -ti`: pure acks included,
 * which the smoke's frames + 52 B leaves out) beside the smoke's count. A quicker
 * look than `deno task smoke`, for tuning. Needs `ss` (iproute2) for --websocket.
 *
 *   deno run -A tools/wire_probe.ts [--seconds 20] [--loss 0.05] [--websocket]
 */
import { Bot, fetchServerAddress, type ServerAddress } from "../net/client/mod.ts";
import { UDP_IP_BYTES, UdpRelay } from "./udp_relay.ts";

function flag(name: string, fallback: number): number {
  const i = Deno.args.indexOf(name);
  return i >= 0 ? Number(Deno.args[i + 1]) : fallback;
}

function freePort(transport: "tcp" | "udp"): number {
  if (transport === "tcp") {
    const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const { port } = l.addr as Deno.NetAddr;
    l.close();
    return port;
  }
  const s = Deno.listenDatagram({ transport: "udp", hostname: "127.0.0.1", port: 0 });
  const { port } = s.addr as Deno.NetAddr;
  s.close();
  return port;
}

async function waitFor(what: string, cond: () => boolean, timeoutMs: number): Promise<void> {
  const start = performance.now();
  while (!cond()) {
    if (performance.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface TcpCounts {
  segsOut: number;
  segsIn: number;
  dataSegsOut: number;
  dataSegsIn: number;
  bytesSent: number;
  bytesReceived: number;
}

/** The kernel's counts over every TCP socket the server holds on `port` (ss -ti). */
async function tcpCounts(port: number): Promise<TcpCounts> {
  const out = await new Deno.Command("ss", { args: ["-tinH", `sport = :${port}`] }).output();
  const text = new TextDecoder().decode(out.stdout);
  const sum = (key: string) =>
    [...text.matchAll(new RegExp(`\\b${key}:(\\d+)`, "g"))].reduce((a, m) => a + Number(m[1]), 0);
  return {
    segsOut: sum("segs_out"),
    segsIn: sum("segs_in"),
    dataSegsOut: sum("data_segs_out"),
    dataSegsIn: sum("data_segs_in"),
    bytesSent: sum("bytes_sent"),
    bytesReceived: sum("bytes_received"),
  };
}

/** Packet sizes seen one way, in buckets of BUCKET_BYTES. */
const BUCKET_BYTES = 10;

if (import.meta.main) {
  const seconds = flag("--seconds", 20);
  const loss = flag("--loss", 0);
  const ws = Deno.args.includes("--websocket");
  const port = freePort("tcp");
  const server = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL("../main.ts", import.meta.url).pathname],
    env: {
      PORT: String(port),
      HOST: "127.0.0.1",
      LOG_LEVEL: "warn",
      WEBTRANSPORT_PORT: String(freePort("udp")),
      BOSS_RUSH: "1",
      DRAIN_SECONDS: "0",
    },
    stdout: "null",
    stderr: "inherit",
  }).spawn();
  const base = `http://127.0.0.1:${port}`;
  const relays: UdpRelay[] = [];
  const bots: Bot[] = [];
  let measuring = false;
  const sizes = { up: new Map<number, number>(), down: new Map<number, number>() };
  try {
    for (let i = 0;; i++) {
      try {
        if ((await (await fetch(`${base}/healthz`)).json()).ok) break;
      } catch {
        // not yet
      }
      if (i > 300) throw new Error("server did not start");
      await new Promise((r) => setTimeout(r, 100));
    }
    const offer = await fetchServerAddress(base);
    const wt = offer.webTransport;
    if (!wt) throw new Error("no WebTransport offered");
    for (let i = 1; i <= 4; i++) {
      const target = new URL(wt.url);
      const relay = new UdpRelay({
        target: { transport: "udp", hostname: "127.0.0.1", port: Number(target.port) },
        loss,
        seed: i,
        onDatagram: (dir, bytes) => {
          if (!measuring) return;
          const b = Math.floor(bytes / BUCKET_BYTES) * BUCKET_BYTES;
          sizes[dir].set(b, (sizes[dir].get(b) ?? 0) + 1);
        },
      });
      relays.push(relay);
      target.port = String(relay.port);
      const address: ServerAddress = { ...offer, webTransport: { ...wt, url: target.href } };
      bots.push(new Bot(ws ? offer : address, { name: `probe${i}`, webSocketOnly: ws }));
    }
    await waitFor(
      "bots in a dungeon",
      () => bots.every((b) => b.client.runtime.instanceId.startsWith("dungeon")),
      30_000,
    );
    for (const b of bots) b.mode = "fight";
    await waitFor(
      "the Warden",
      () => bots.some((b) => (b.log.events.get("bossSpawned") ?? 0) > 0),
      30_000,
    );
    const mark = relays.map((r) => ({
      ...r.wireBytes(),
      upN: r.up.datagrams,
      downN: r.down.datagrams,
    }));
    const payload = bots.map((b) => ({
      down: b.client.runtime.bytesInTotal,
      up: b.client.runtime.bytesOutTotal,
    }));
    const snaps = bots.map((b) => b.client.runtime.snapshotsTotal);
    const tcp0 = await tcpCounts(port);
    const counted0 = bots.map((b) => ({ ...b.client.wire }));
    measuring = true;
    const t0 = performance.now();
    await new Promise((r) => setTimeout(r, seconds * 1000));
    measuring = false;
    const s = (performance.now() - t0) / 1000;
    const tcp1 = await tcpCounts(port);
    const n = bots.length;
    let upB = 0, downB = 0, upN = 0, downN = 0, pUp = 0, pDown = 0, snapN = 0;
    relays.forEach((r, i) => {
      const w = r.wireBytes();
      upB += w.up - mark[i].up;
      downB += w.down - mark[i].down;
      upN += r.up.datagrams - mark[i].upN;
      downN += r.down.datagrams - mark[i].downN;
      pUp += bots[i].client.runtime.bytesOutTotal - payload[i].up;
      pDown += bots[i].client.runtime.bytesInTotal - payload[i].down;
      snapN += bots[i].client.runtime.snapshotsTotal - snaps[i];
    });
    const per = (x: number) => Math.round(x / n / s);
    const hist = (m: Map<number, number>) =>
      [...m.entries()].sort((a, b) => a[0] - b[0]).map(([k, v]) =>
        `${k}-${k + BUCKET_BYTES - 1}:${(v / n / s).toFixed(1)}`
      ).join(" ");
    console.log(
      `per client over ${s.toFixed(1)} s of the boss fight (UDP/IP ${UDP_IP_BYTES} B each):`,
    );
    console.log(
      `down: ${per(downN)} packets/s, wire ${per(downB)} B/s, payload ${
        per(pDown)
      } B/s, snapshots ${(snapN / n / s).toFixed(1)}/s`,
    );
    console.log(`  sizes/s ${hist(sizes.down)}`);
    console.log(`up:   ${per(upN)} packets/s, wire ${per(upB)} B/s, payload ${per(pUp)} B/s`);
    console.log(`  sizes/s ${hist(sizes.up)}`);
    if (ws) {
      const d = (k: keyof TcpCounts) => per(tcp1[k] - tcp0[k]);
      console.log(
        `tcp down: ${d("segsOut")} segments/s (${d("dataSegsOut")} with data), ${
          d("bytesSent") + 52 * d("segsOut")
        } B/s with 52 B TCP/IP each`,
      );
      console.log(
        `tcp up:   ${d("segsIn")} segments/s (${d("dataSegsIn")} with data), ${
          d("bytesReceived") + 52 * d("segsIn")
        } B/s`,
      );
      const counted = (k: "bytesIn" | "bytesOut" | "framesIn" | "framesOut") =>
        per(bots.reduce((a, b, i) => a + b.client.wire[k] - counted0[i][k], 0));
      console.log(
        `smoke's count (frames + 52 B): down ${counted("bytesIn")} B/s in ${
          counted("framesIn")
        } frames/s, up ${counted("bytesOut")} B/s in ${counted("framesOut")} frames/s`,
      );
    }
  } finally {
    for (const b of bots) await b.stop();
    for (const r of relays) r.close();
    server.kill("SIGTERM");
    await server.status;
  }
}
