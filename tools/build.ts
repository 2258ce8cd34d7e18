/**
 * Bundles the browser client with esbuild, straight from node_modules.
 * `deno task build` writes a minified dist/client.js and prints its size raw and gzipped;
 * the dev server calls `bundleClient` in-process.
 */
import * as esbuild from "esbuild";

const ENTRY = new URL("../client/main.tsx", import.meta.url).pathname;

/** Bundles client/main.tsx and returns the JavaScript. */
export async function bundleClient(opts: { minify: boolean }): Promise<string> {
  const result = await esbuild.build({
    entryPoints: [ENTRY],
    bundle: true,
    write: false,
    format: "esm",
    target: "es2022",
    minify: opts.minify,
    sourcemap: opts.minify ? false : "inline",
    jsx: "automatic",
    jsxImportSource: "preact",
    logLevel: "silent",
    define: { "import.meta.main": "false" },
  });
  return result.outputFiles[0].text;
}

/** Stops esbuild's service so the process can exit. */
export function stopBundler(): Promise<void> {
  return esbuild.stop();
}

if (import.meta.main) {
  const js = await bundleClient({ minify: true });
  await stopBundler();
  await Deno.mkdir(new URL("../dist/", import.meta.url), { recursive: true });
  const out = new URL("../dist/client.js", import.meta.url);
  await Deno.writeTextFile(out, js);
  const raw = new TextEncoder().encode(js);
  const gz = await new Response(
    new Blob([raw]).stream().pipeThrough(new CompressionStream("gzip")),
  ).arrayBuffer();
  console.log(
    `dist/client.js: ${(raw.byteLength / 1024).toFixed(1)} KB raw, ${
      (gz.byteLength / 1024).toFixed(1)
    } KB gzipped`,
  );
}
