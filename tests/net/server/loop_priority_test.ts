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

Deno.test("the guard gives the priority back after ticks dropped in N checks in a row, once", () => {
  let lowered = 0;
  const guard = new PriorityGuard({ lower: () => lowered++, overloadChecks: 3 });
  assert.equal(guard.check(0), false);
  assert.equal(guard.check(5), false, "one check with drops");
  assert.equal(guard.check(9), false, "two in a row");
  assert.equal(guard.check(9), false, "a check without: the count starts again");
  assert.equal(guard.check(12), false);
  assert.equal(guard.check(15), false);
  assert.equal(lowered, 0);
  assert.equal(guard.lowered, false);
  assert.equal(guard.check(20), true, "the third in a row");
  assert.equal(lowered, 1);
  assert.equal(guard.lowered, true);
  assert.equal(guard.check(30), false, "given back once");
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
