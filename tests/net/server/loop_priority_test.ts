/**
 * The game loop's real-time priority: the guard that gives it back when the loop falls
 * behind, and the C library's call on this very thread (read back from /proc).
 */
import assert from "node:assert/strict";
import {
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
function checksOf(guard: PriorityGuard): (drops: readonly number[]) => boolean[] {
  const counts = { ticks: 0, ticksDropped: 0 };
  return (drops) =>
    drops.map((d) => {
      counts.ticks += 300 - d;
      counts.ticksDropped += d;
      return guard.check({ ...counts });
    });
}

Deno.test("the guard gives the priority back after N checks in a row dropping a share of ticks, once", () => {
  let lowered = 0;
  const guard = new PriorityGuard({
    lower: () => lowered++,
    overloadChecks: 3,
    overloadShare: 0.02,
  });
  assert.deepEqual(checksOf(guard)([40, 30, 0, 50, 5, 60, 60, 10, 90, 90]), [
    false, // 40 of 300: one check behind
    false, // two in a row
    false, // a clean check: the count starts again
    false,
    false, // 5 of 300 is under 2 %: a hiccup, not overload, and the count starts again
    false,
    false,
    true, // 10 of 300: the third in a row
    false, // given back once
    false,
  ]);
  assert.equal(lowered, 1);
  assert.equal(guard.lowered, true);
});

Deno.test("a start-up's or a crowd's burst of dropped ticks does not give the priority back", () => {
  let lowered = 0;
  const guard = new PriorityGuard({
    lower: () => lowered++,
    overloadChecks: 6,
    overloadShare: 0.02,
  });
  const run = checksOf(guard);
  // Two load test ramps to 800 players, as the scheduler counted them, then a steady load.
  run([131, 13, 0, 0, 0, 114, 1, 0, 0, 0, 0, 0]);
  assert.equal(lowered, 0);
  // A loop that really cannot keep up drops ticks in every check.
  assert.deepEqual(run([200, 150, 120, 140, 160, 130]), [false, false, false, false, false, true]);
  assert.equal(lowered, 1);
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
