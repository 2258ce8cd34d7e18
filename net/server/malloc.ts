/**
 * The C allocator the server runs on. Deno's runtime allocates through malloc for
 * every socket op and every ArrayBuffer a message is written into; with glibc's
 * malloc that was about 6 % of a loaded server's CPU in `perf`, much of it glibc
 * merging its free lists. jemalloc, preloaded, does the same work for less: `deno task
 * loadtest` at 150–175 dungeons spent 7–11 % less CPU a tick, and the tick itself ran
 * 7–10 % shorter (docs/CAPACITY.md). Every launch of the
 * server preloads it (`deno task start`, deploy/Dockerfile, both systemd units, the load
 * test; tests/net/server/launch_test.ts holds them to it). Where the library is
 * missing, the dynamic loader says so once on stderr and the server runs on glibc's.
 */

/**
 * What LD_PRELOAD names: a bare file name, found on the system's library path whatever
 * the architecture (Debian's `libjemalloc2`, which `redis-server` also brings).
 */
export const SERVER_MALLOC = "libjemalloc.so.2";

/** Which malloc a process runs on. */
export type MallocName = "jemalloc" | "system" | "unknown";

/**
 * Which malloc process `pid` runs on, from its memory map: "unknown" where there is no
 * /proc (not Linux) or the process is gone.
 */
export function mallocOf(pid: number | "self" = "self"): MallocName {
  let maps: string;
  try {
    maps = Deno.readTextFileSync(`/proc/${pid}/maps`);
  } catch {
    return "unknown";
  }
  return maps.includes("/libjemalloc.so") ? "jemalloc" : "system";
}
