/** parseLinkSpec / formatLinkSpec: the one string LINK_SIM is written in. */
import assert from "node:assert/strict";
import { formatLinkSpec, LinkSpecError, parseLinkSpec } from "../../../net/link/mod.ts";

Deno.test("parseLinkSpec() reads delay ± jitter and stalls, the same in both directions", () => {
  const dir = { delayMs: 150, jitterMs: 50, stallMs: 250, stallEveryMs: 4000 };
  assert.deepEqual(parseLinkSpec("150±50,stall=250/4000"), { up: dir, down: dir, seed: 1 });
  assert.deepEqual(parseLinkSpec(" 150 +- 50 , stall = 250/4000 "), {
    up: dir,
    down: dir,
    seed: 1,
  });
});

Deno.test("parseLinkSpec() gives each direction its own delay with up= and down=", () => {
  const spec = parseLinkSpec("down=150±50,up=20,seed=7")!;
  assert.deepEqual(spec.down, { delayMs: 150, jitterMs: 50, stallMs: 0, stallEveryMs: 0 });
  assert.deepEqual(spec.up, { delayMs: 20, jitterMs: 0, stallMs: 0, stallEveryMs: 0 });
  assert.equal(spec.seed, 7);
  // A bare delay is the default the directions override.
  assert.equal(parseLinkSpec("100,up=10")!.down.delayMs, 100);
  assert.equal(parseLinkSpec("100,up=10")!.up.delayMs, 10);
});

Deno.test("parseLinkSpec() turns the link off for off, 0 and an empty string", () => {
  for (const text of ["", "off", "0", "  "]) assert.equal(parseLinkSpec(text), undefined, text);
});

Deno.test("parseLinkSpec() refuses what it cannot read, saying what and why", () => {
  const cases: [string, RegExp][] = [
    ["fast", /"fast".*150±50/],
    ["150±", /"150±"/],
    ["-5", /"-5"/],
    ["50±80", /jitter cannot exceed the delay/],
    ["stall=250", /LENGTH\/EVERY/],
    ["stall=250/0", /gap of at least 1 ms/],
    ["loss=5", /unknown setting "loss"/],
    ["seed=x", /whole number/],
    ["99999", /outside \[0, 60000\]/],
    ["stall=99999/4000", /outside \[0, 60000\]/],
    ["stall=250/700000", /outside \[0, 600000\]/],
  ];
  for (const [text, why] of cases) {
    assert.throws(() => parseLinkSpec(text), (err: unknown) => {
      assert.ok(err instanceof LinkSpecError, text);
      assert.match(err.message, why);
      return true;
    });
  }
});

Deno.test("formatLinkSpec() writes what parseLinkSpec() reads back", () => {
  for (const text of ["150±50,stall=250/4000", "0", "up=20,down=150±50,seed=3", "75±25"]) {
    const spec = parseLinkSpec(text);
    assert.deepEqual(parseLinkSpec(formatLinkSpec(spec)), spec, text);
  }
  assert.equal(formatLinkSpec(parseLinkSpec("150+-50, stall=250/4000")), "150±50,stall=250/4000");
  assert.equal(formatLinkSpec(undefined), "off");
});
