/**
 * The front door listens on Deno's sockets or on the C library's
 * (net/server/native_tcp.ts): its tests run on both.
 */
import assert from "node:assert/strict";
import { NativeTcp } from "../../net/server/native_tcp.ts";

/** Registers `fn` twice: on Deno's sockets (undefined) and on the C library's. */
export function onBothSockets(
  name: string,
  fn: (native: NativeTcp | undefined) => Promise<void>,
): void {
  Deno.test(`${name} (Deno's sockets)`, () => fn(undefined));
  Deno.test({
    name: `${name} (the C library's sockets)`,
    ignore: Deno.build.os !== "linux",
    fn: async () => {
      const native = NativeTcp.open();
      assert.ok(native, "the C library's sockets open on Linux with FFI allowed");
      try {
        await fn(native);
      } finally {
        native.close();
      }
    },
  });
}
