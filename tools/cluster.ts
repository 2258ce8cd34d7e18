/**
 * `deno task cluster [N] [--kv] [--port=8001]`: a local cluster for a developer —
 * a throwaway redis-server (or a Deno KV file with --kv) and N game processes
 * (default 3) on consecutive ports, sharing a registry and a token secret. Open
 * any of the printed URLs; walk into the portal and the dungeon may be on another
 * process (the netgraph's F3 and the server logs show where). Ctrl-C stops all.
 */
import { checkArgs } from "./args.ts";
import { startCluster } from "./cluster_procs.ts";

checkArgs("cluster", Deno.args, {
  values: ["port"],
  switches: ["kv", "verbose"],
  positional: /^\d+$/,
}, "[N]");

const n = Number(Deno.args.find((a) => /^\d+$/.test(a)) ?? 3);
const port = Number(Deno.args.find((a) => a.startsWith("--port="))?.slice(7) ?? 8001);
const backend = Deno.args.includes("--kv") ? "kv" : "redis";
if (!Number.isInteger(n) || n < 1 || n > 16) {
  console.error("usage: deno task cluster [N=1..16] [--kv] [--port=8001]");
  Deno.exit(2);
}
console.log(`starting ${n} game processes on ${backend}…`);
const cluster = await startCluster({
  processes: n,
  backend,
  basePort: port,
  echo: Deno.args.includes("--verbose"),
});
console.log(`registry: ${cluster.registryUrl}`);
for (const p of cluster.procs) console.log(`  ${p.id}: ${p.url}/   (metrics ${p.url}/metrics)`);
console.log("Ctrl-C to stop.");

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  console.log("stopping…");
  await cluster.stop();
  Deno.exit(0);
};
Deno.addSignalListener("SIGINT", stop);
Deno.addSignalListener("SIGTERM", stop);
// A process that dies on its own is worth knowing about.
for (const p of cluster.procs) {
  p.child.status.then((s) => {
    if (!stopping) {
      console.error(`${p.id} exited (${s.code ?? s.signal}): ${p.output.slice(-3).join(" | ")}`);
    }
  });
}
