/**
 * The game loop's real-time priority: the guard that gives it back when the loop falls
 * behind, and the C library's call on this very thread (read back from /proc).
 */
import assert from "node:assert/strict";
import {
  type GuardVerdict,
  PriorityGuard,
  raiseLoopPriority,
  refusalText,
  schedPolicyOf,
  ThreadScheduling,
} from "../../../net/server/loop_priority.ts";

/** This thread's scheduling policy from /proc (0 normal, 1 FIFO), or undefined off Linux. */
function policyOfThisThread(): number | undefined {
  try {
    return schedPolicyOf(Deno.readTextFileSync("/proc/thread-self/stat"));
  } catch {
    return undefined;
  }
}

/** The scheduling policy a Worker's thread starts with, read from /proc inside it. */
async function policyOfANewThread(): Promise<number> {
  const module = JSON.stringify(
    new URL("../../../net/server/loop_priority.ts", import.meta.url).href,
  );
  const code = `import { schedPolicyOf } from ${module};
    postMessage(schedPolicyOf(Deno.readTextFileSync("/proc/thread-self/stat")));`;
  const url = URL.createObjectURL(new Blob([code], { type: "application/javascript" }));
  const worker = new Worker(url, { type: "module" });
  try {
    return await new Promise<number>((resolve, reject) => {
      worker.onmessage = (e) => resolve(e.data);
      worker.onerror = (e) => reject(e.error ?? new Error(e.message));
    });
  } finally {
    worker.terminate();
    URL.revokeObjectURL(url);
  }
}

/**
 * A scheduler's running counts, checked every 5 s (300 ticks due): `run(drops)` feeds the
 * guard one check per entry, that check having dropped `drops[k]` of its ticks.
 */
function checksOf(guard: PriorityGuard): (drops: readonly number[]) => GuardVerdict[] {
  const counts = { ticks: 0, ticksDropped: 0 };
  return (drops) =>
    drops.map((d) => {
      counts.ticks += 300 - d;
      counts.ticksDropped += d;
      return guard.check({ ...counts });
    });
}

/** A guard whose priority calls are counted (`raise` refused while `refuse` is set). */
function countedGuard(opts: { overloadChecks: number; recoverChecks: number }) {
  const calls = { lower: 0, raise: 0, refuse: false };
  const guard = new PriorityGuard({
    lower: () => calls.lower++,
    raise: () => {
      calls.raise++;
      return !calls.refuse;
    },
    overloadShare: 0.02,
    ...opts,
  });
  return { guard, calls, run: checksOf(guard) };
}

const _ = undefined;

Deno.test("the guard gives the priority back after N checks in a row dropping a share of ticks", () => {
  const { guard, calls, run } = countedGuard({ overloadChecks: 3, recoverChecks: 100 });
  assert.deepEqual(run([40, 30, 0, 50, 5, 60, 60, 10, 90, 90]), [
    _, // 40 of 300: one check behind
    _, // two in a row
    _, // a clean check: the count starts again
    _,
    _, // 5 of 300 is under 2 %: a hiccup, not overload, and the count starts again
    _,
    _,
    "lowered", // 10 of 300: the third in a row
    _, // given back already
    _,
  ]);
  assert.deepEqual(calls, { lower: 1, raise: 0, refuse: false });
  assert.equal(guard.lowered, true);
});

Deno.test("a start-up's or a crowd's burst of dropped ticks does not give the priority back", () => {
  const { calls, run } = countedGuard({ overloadChecks: 6, recoverChecks: 60 });
  // Two load test ramps to 800 players, as the scheduler counted them, then a steady load.
  run([131, 13, 0, 0, 0, 114, 1, 0, 0, 0, 0, 0]);
  assert.equal(calls.lower, 0);
  // A loop that really cannot keep up drops ticks in every check.
  assert.deepEqual(run([200, 150, 120, 140, 160, 130]), [_, _, _, _, _, "lowered"]);
  assert.equal(calls.lower, 1);
});

Deno.test("the guard takes the priority again after clean checks, waiting twice as long each time", () => {
  const { guard, calls, run } = countedGuard({ overloadChecks: 2, recoverChecks: 3 });
  assert.deepEqual(run([50, 50]), [_, "lowered"]);
  assert.equal(guard.recoverChecks, 3);
  // A dropped tick, even one, restarts the wait.
  assert.deepEqual(run([0, 0, 1, 0, 0, 0]), [_, _, _, _, _, "raised"]);
  assert.deepEqual(calls, { lower: 1, raise: 1, refuse: false });
  assert.equal(guard.lowered, false);
  // Overloaded again: given back, and the next try waits 6 clean checks.
  assert.deepEqual(run([50, 50]), [_, "lowered"]);
  assert.equal(guard.recoverChecks, 6);
  assert.deepEqual(run([0, 0, 0, 0, 0]), [_, _, _, _, _]);
  // A refusal (the limit changed meanwhile) leaves it lowered, to try again after as long.
  calls.refuse = true;
  assert.deepEqual(run([0]), [_]);
  assert.equal(calls.raise, 2);
  assert.equal(guard.lowered, true);
  calls.refuse = false;
  assert.deepEqual(run([0, 0, 0, 0, 0, 0]), [_, _, _, _, _, "raised"]);
  assert.deepEqual(calls, { lower: 2, raise: 3, refuse: false });
  assert.equal(guard.recoverChecks, 6, "the wait stays doubled: the load was on the edge once");
  // It doubles with each overload, up to 16 times the first wait.
  const waits: number[] = [];
  for (let k = 0; k < 5; k++) {
    run([50, 50]);
    waits.push(guard.recoverChecks);
    run(Array(guard.recoverChecks).fill(0));
  }
  assert.deepEqual(waits, [12, 24, 48, 48, 48]);
  assert.equal(guard.lowered, false);
});

Deno.test("the calling thread goes to SCHED_FIFO and back, or says why it may not", async () => {
  const sched = ThreadScheduling.open();
  if (!sched) {
    assert.notEqual(Deno.build.os, "linux", "Linux with FFI always gets the C library");
    assert.equal(raiseLoopPriority(sched).got, "normal");
    return;
  }
  try {
    const got = raiseLoopPriority(sched);
    if (got.got === "realtime") {
      assert.equal(policyOfThisThread(), 1, "the kernel says SCHED_FIFO");
      assert.equal(await policyOfANewThread(), 0, "a thread started now begins at normal priority");
      assert.equal(sched.normal(), 0);
      assert.equal(policyOfThisThread(), 0, "back to SCHED_OTHER");
    } else {
      // Not permitted here (no CAP_SYS_NICE, no RLIMIT_RTPRIO): said in words to act on.
      assert.match(got.why ?? "", /CAP_SYS_NICE|errno/);
      assert.equal(policyOfThisThread(), 0);
    }
  } finally {
    sched.normal();
    sched.close();
  }
});

Deno.test("a refusal names what to grant", () => {
  assert.match(refusalText(1), /CAP_SYS_NICE/);
  assert.match(refusalText(22), /errno 22/);
});
