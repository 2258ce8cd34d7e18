/**
 * `deno task cluster [N] [--kv] [--port=8001]`: a local cluster for a developer —
 * a throwaway redis-server (or a Deno KV file with --kv) and N game processes
 * (default 3) on consecutive ports, sharing a registry and a token secret. Open
 * any of the printed URLs; walk into the portal and the dungeon may be on another
 * process (the netgraph's F3 and the server logs show where). Ctrl-C stops all.
 */
import { checkArgs, type FlagSpec, intIn, usage } from "./args.ts";
import { startCluster } from "./cluster_procs.ts";

const FLAGS: FlagSpec = { values: ["port"], switches: ["kv", "verbose"], positional: /^\d+$/ };
checkArgs("cluster", Deno.args, FLAGS, "[N]");

const n = Number(Deno.args.find((a) => /^\d+$/.test(a)) ?? 3);
let port = 8001;
try {
  if (n < 1 || n > 16) throw new Error(`N=${n}: expected 1 to 16 processes`);
  port = intIn(
    "port",
    Deno.args.find((a) => a.startsWith("--port="))?.slice(7) ?? "8001",
    1,
    65535,
  );
} catch (err) {
  console.error(`cluster: ${(err as Error).message}`);
  console.error(usage("cluster", FLAGS, "[N]"));
  Deno.exit(2);
}
const backend = Deno.args.includes("--kv") ? "kv" : "redis";
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
