/**
 * Every way the server is launched carries the same V8 flags (SERVER_V8_FLAGS),
 * preloads the same malloc (SERVER_MALLOC) and, where a unit file decides it, lets the
 * game loop take its real-time priority: a capacity figure measured under one setting
 * says nothing about a deploy that runs with another.
 */
import assert from "node:assert/strict";
import { SERVER_V8_FLAGS } from "../../../net/server/config.ts";
import { mallocOf, SERVER_MALLOC } from "../../../net/server/malloc.ts";
import { LOOP_RT_PRIORITY } from "../../../net/server/loop_priority.ts";

const root = new URL("../../../", import.meta.url);
const read = (path: string) => Deno.readTextFileSync(new URL(path, root));

/** The `--v8-flags=` values a launch command of main.ts passes, in `text`. */
function flagsBeforeMain(text: string): string[] {
  return [...text.matchAll(/--v8-flags=([^\s"']+)["']?,?\s*["']?main\.ts/g)].map((m) => m[1]);
}

/** What `text` sets LD_PRELOAD to, each time it does. */
function preloads(text: string): string[] {
  return [...text.matchAll(/LD_PRELOAD=([^\s"'`]*)/g)].map((m) => m[1]);
}

const LAUNCHES = (): [string, string][] => [
  ["deno.json (start)", JSON.parse(read("deno.json")).tasks.start],
  ["deploy/Dockerfile", read("deploy/Dockerfile")],
  ["deploy/bullet-hell.service", read("deploy/bullet-hell.service")],
  ["deploy/bullet-hell@.service", read("deploy/bullet-hell@.service")],
];

Deno.test("deno task start, the Dockerfile, both systemd units and deploy/README.md run main.ts with SERVER_V8_FLAGS", () => {
  for (const [where, text] of [...LAUNCHES(), ["deploy/README.md", read("deploy/README.md")]]) {
    const found = flagsBeforeMain(text);
    assert.ok(found.length > 0, `${where} launches main.ts with --v8-flags`);
    for (const flags of found) assert.equal(flags, SERVER_V8_FLAGS, where);
  }
});

/** What `deno eval CODE` (with these extra arguments and environment) prints. */
async function denoEval(
  code: string,
  opts: { args?: string[]; env?: Record<string, string> } = {},
): Promise<{ stdout: string; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", ...opts.args ?? [], code],
    env: opts.env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b).trim();
  return { stdout: text(out.stdout), stderr: text(out.stderr) };
}

Deno.test("the flags are ones this Deno's V8 knows (a typo stops the process at start)", async () => {
  const out = await denoEval("console.log('ok')", { args: [`--v8-flags=${SERVER_V8_FLAGS}`] });
  assert.equal(out.stderr, "");
  assert.equal(out.stdout, "ok");
});

Deno.test("deno task start, the Dockerfile and both systemd units preload SERVER_MALLOC", () => {
  for (const [where, text] of LAUNCHES()) {
    const found = preloads(text);
    assert.ok(found.length > 0, `${where} sets LD_PRELOAD`);
    for (const lib of found) assert.equal(lib, SERVER_MALLOC, where);
  }
});

Deno.test("both systemd units and the compose file let the game loop take its real-time priority", () => {
  for (const unit of ["deploy/bullet-hell.service", "deploy/bullet-hell@.service"]) {
    const text = read(unit);
    assert.match(text, new RegExp(`^LimitRTPRIO=${LOOP_RT_PRIORITY}$`, "m"), unit);
    assert.match(text, /^RestrictRealtime=no$/m, unit);
    assert.doesNotMatch(text, /^RestrictRealtime=yes$/m, unit);
  }
  const compose = read("deploy/compose.yaml");
  assert.match(compose, /cap_add: \[SYS_NICE\]/);
  assert.match(compose, new RegExp(`rtprio: ${LOOP_RT_PRIORITY}\\b`));
});

/** What mallocOf says inside a Deno started with LD_PRELOAD=`preload`, and its stderr. */
async function mallocUnder(preload: string): Promise<{ malloc: string; stderr: string }> {
  const module = JSON.stringify(new URL("net/server/malloc.ts", root).href);
  const out = await denoEval(`import { mallocOf } from ${module}; console.log(mallocOf());`, {
    env: { LD_PRELOAD: preload },
  });
  return { malloc: out.stdout, stderr: out.stderr };
}

Deno.test({
  name: "a Deno launched with the preload runs on jemalloc, one without on glibc's malloc",
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    const preloaded = await mallocUnder(SERVER_MALLOC);
    assert.equal(
      preloaded.stderr,
      "",
      `the loader could not preload ${SERVER_MALLOC}: install Debian's libjemalloc2`,
    );
    assert.equal(preloaded.malloc, "jemalloc");
    assert.equal((await mallocUnder("")).malloc, "system");
    // A process that is not there has no map to read.
    assert.equal(mallocOf(2 ** 22 + 1), "unknown");
  },
});
