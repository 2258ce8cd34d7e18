import assert from "node:assert/strict";
import { flagValue, intIn, positiveInts, unknownArgs, usage } from "../../tools/args.ts";

const SPEC = { values: ["steps", "crowd"], switches: ["kv"], positional: /^\d+$/ };

Deno.test("unknownArgs: what a tool takes passes, a typo is named", () => {
  assert.deepEqual(unknownArgs(["--steps=150,200", "--crowd=0", "--kv", "3"], SPEC), []);
  assert.deepEqual(unknownArgs(["--step=200"], SPEC), ["unknown flag --step=200"]);
  assert.deepEqual(unknownArgs(["--registry=kv"], SPEC), ["unknown flag --registry=kv"]);
});

Deno.test("unknownArgs: a value flag without its value, a switch with one, a stray word", () => {
  assert.deepEqual(unknownArgs(["--steps", "--kv=1", "three"], SPEC), [
    "--steps needs a value (--steps=…)",
    "--kv=1 takes no value",
    "unexpected argument three",
  ]);
  assert.deepEqual(unknownArgs(["3"], { switches: ["kv"] }), ["unexpected argument 3"]);
});

Deno.test("usage lists the positional, the values and the switches", () => {
  assert.equal(
    usage("cluster", SPEC, "[N]"),
    "usage: deno task cluster [N] [--steps=…] [--crowd=…] [--kv]",
  );
});

Deno.test("positiveInts and intIn refuse what would run as NaN or a negative", () => {
  assert.deepEqual(positiveInts("steps", "150,175,200"), [150, 175, 200]);
  assert.throws(() => positiveInts("steps", "150,,200"), /--steps=150,,200: expected positive/);
  assert.throws(() => positiveInts("steps", "abc"), /expected positive/);
  assert.throws(() => positiveInts("steps", "0"), /expected positive/);
  assert.equal(intIn("crowd", "0", 0, 10_000), 0);
  assert.throws(
    () => intIn("crowd", "2.5", 0, 10_000),
    /--crowd=2.5: expected a whole number from 0 to 10000/,
  );
  assert.throws(() => intIn("crowd", "-1", 0, 10_000), /expected a whole number/);
});

Deno.test("flagValue: everything after the first '=' of its own flag, or nothing", () => {
  const argv = ["--steps=150,200", "--server-v8=--trace-gc=1", "--kv"];
  assert.equal(flagValue(argv, "steps"), "150,200");
  assert.equal(flagValue(argv, "server-v8"), "--trace-gc=1");
  assert.equal(flagValue(argv, "step"), undefined, "a prefix of another flag is not it");
  assert.equal(flagValue(argv, "kv"), undefined, "a switch has no value");
});
