/**
 * Mutants that once survived the whole suite, re-run on demand: each is applied to a
 * copy of the tree in a temporary directory (the working tree is never touched), the
 * fast tier runs there, and the mutant must be KILLED (a test fails). Prints one line
 * per mutant and exits 1 if any survives.
 *
 *   deno task mutants [name…]
 */

interface Mutant {
  readonly file: string;
  readonly from: string;
  readonly to: string;
  /** What the mutant breaks, in the game's terms. */
  readonly breaks: string;
}

const MUTANTS: Record<string, Mutant> = {
  "redundancy-1": {
    file: "content/net_tuning.ts",
    from: "datagram: { batchTicks: 2, redundancy: 3 },",
    to: "datagram: { batchTicks: 2, redundancy: 1 },",
    breaks: "input messages carry one frame: a lost datagram loses input",
  },
  "newest-wins-client": {
    file: "net/client/runtime.ts",
    from: "if (newest && msg.tick <= newest.msg.tick) return; // out of date: newest wins",
    to: "",
    breaks: "an older snapshot replaces a newer one",
  },
  "newest-wins-server": {
    file: "net/server/transport.ts",
    from: "if (this.#ws.readyState !== OPEN || this.#ws.bufferedAmount > 0) return false;",
    to: "if (this.#ws.readyState !== OPEN) return false;",
    breaks: "snapshots queue behind stale ones on a backed-up socket",
  },
  "no-interpolation": {
    file: "net/client/remote_view.ts",
    from: "  return { x: pl.x + (ph.x - pl.x) * t, y: pl.y + (ph.y - pl.y) * t };",
    to: "  return { x: ph.x, y: ph.y };",
    breaks: "other ships jump from snapshot to snapshot",
  },
  "portal-open": {
    file: "sim/world.ts",
    from: '    return this.stage === "hub" || this.stage === "waves";',
    to: "    return true;",
    breaks: "the portal puts players into a boss fight",
  },
  "no-cleared-return": {
    file: "net/server/instance.ts",
    from:
      '            if (p.status === "active") {\n              later(TRANSFER_DELAYS.resultsReturnTicks',
    to: '            if (p.status === "active" && p.id < 0) {\n' +
      "              later(TRANSFER_DELAYS.resultsReturnTicks",
    breaks: "a cleared dungeon keeps its players forever",
  },
};

const ROOT = new URL("../", import.meta.url).pathname;
const SKIP = new Set([".git", "node_modules", ".tools", "dist", ".screenshots"]);

async function copyTree(from: string, to: string): Promise<void> {
  await Deno.mkdir(to, { recursive: true });
  for await (const e of Deno.readDir(from)) {
    if (SKIP.has(e.name)) continue;
    const src = `${from}/${e.name}`;
    const dst = `${to}/${e.name}`;
    if (e.isDirectory) await copyTree(src, dst);
    else if (e.isFile) await Deno.copyFile(src, dst);
  }
}

/** Runs the fast tier in `dir`: the names of the tests that failed (none: it passed). */
async function failingTests(dir: string): Promise<string[]> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["task", "test"],
    cwd: dir,
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  const failed = [...text.matchAll(/=> (.+?) \.\.\. FAILED/g)].map((m) => m[1]);
  return out.success ? [] : failed.length > 0 ? [...new Set(failed)] : ["(the run failed)"];
}

const names = Deno.args.length > 0 ? Deno.args : Object.keys(MUTANTS);
const tmp = await Deno.makeTempDir({ prefix: "mutants-" });
let survivors = 0;
try {
  await copyTree(ROOT, tmp);
  await Deno.symlink(`${ROOT}node_modules`, `${tmp}/node_modules`);
  for (const name of names) {
    const m = MUTANTS[name];
    if (!m) throw new Error(`Cannot find mutant ${name}; there are ${Object.keys(MUTANTS)}`);
    const path = `${tmp}/${m.file}`;
    const original = await Deno.readTextFile(path);
    if (!original.includes(m.from)) {
      console.log(
        `${name}: STALE — ${m.file} no longer has the mutated code; update tools/mutants.ts`,
      );
      survivors++;
      continue;
    }
    await Deno.writeTextFile(path, original.replace(m.from, m.to));
    const failed = await failingTests(tmp);
    await Deno.writeTextFile(path, original);
    if (failed.length === 0) survivors++;
    console.log(`${name}: ${failed.length === 0 ? "SURVIVED" : "KILLED"} (${m.breaks})`);
    for (const test of failed) console.log(`  by: ${test}`);
  }
} finally {
  await Deno.remove(tmp, { recursive: true });
}
Deno.exit(survivors > 0 ? 1 : 0);
