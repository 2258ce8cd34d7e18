/**
 * Every way the server is launched carries the same V8 flags (SERVER_V8_FLAGS): a
 * capacity figure measured under one set of flags says nothing about a deploy that
 * runs with another.
 */
import assert from "node:assert/strict";
import { SERVER_V8_FLAGS } from "../../../net/server/config.ts";

const root = new URL("../../../", import.meta.url);
const read = (path: string) => Deno.readTextFileSync(new URL(path, root));

/** The `--v8-flags=` values a launch command of main.ts passes, in `text`. */
function flagsBeforeMain(text: string): string[] {
  return [...text.matchAll(/--v8-flags=([^\s"']+)["']?,?\s*["']?main\.ts/g)].map((m) => m[1]);
}

Deno.test("deno task start, the Dockerfile, both systemd units and deploy/README.md run main.ts with SERVER_V8_FLAGS", () => {
  const launches: [string, string][] = [
    ["deno.json (start)", JSON.parse(read("deno.json")).tasks.start],
    ["deploy/Dockerfile", read("deploy/Dockerfile")],
    ["deploy/bullet-hell.service", read("deploy/bullet-hell.service")],
    ["deploy/bullet-hell@.service", read("deploy/bullet-hell@.service")],
    ["deploy/README.md", read("deploy/README.md")],
  ];
  for (const [where, text] of launches) {
    const found = flagsBeforeMain(text);
    assert.ok(found.length > 0, `${where} launches main.ts with --v8-flags`);
    for (const flags of found) assert.equal(flags, SERVER_V8_FLAGS, where);
  }
});

Deno.test("the flags are ones this Deno's V8 knows (a typo stops the process at start)", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", `--v8-flags=${SERVER_V8_FLAGS}`, "console.log('ok')"],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(new TextDecoder().decode(out.stderr).trim(), "");
  assert.equal(new TextDecoder().decode(out.stdout).trim(), "ok");
});
