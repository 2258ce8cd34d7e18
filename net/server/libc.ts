/**
 * The C library over Deno's FFI, where it can be had: Linux, with the FFI permission.
 * The front door's sockets (native_tcp.ts) and the game loop's priority
 * (loop_priority.ts) open it with their own symbols.
 */

/** `symbols` of libc, or undefined off Linux, without the FFI permission or without libc. */
export function openLibc<S extends Deno.ForeignLibraryInterface>(
  symbols: S,
): Deno.DynamicLibrary<S> | undefined {
  if (Deno.build.os !== "linux") return undefined;
  try {
    if (Deno.permissions.querySync({ name: "ffi" }).state !== "granted") return undefined;
    return Deno.dlopen("libc.so.6", symbols);
  } catch {
    return undefined;
  }
}
