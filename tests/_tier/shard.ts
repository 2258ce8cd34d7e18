/**
 * The fast tier in two shards: `deno task test` runs shard_0.ts and shard_1.ts side by side
 * (`--parallel`), each importing half of the in-process test files into one isolate. Deno
 * starts a fresh isolate per test file, and with some fifty files that start-up, not the tests,
 * was most of the gate's time. Files are found by walking the tier's folders, so a new
 * `*_test.ts` there runs without being listed anywhere.
 */

/** The fast tier's folders, relative to tests/. */
const FOLDERS = ["sim", "net", "routes", "client", "content", "tools"];

/** Every `*_test.ts` under the tier's folders, sorted. */
async function testFiles(): Promise<URL[]> {
  const root = new URL("../", import.meta.url);
  const out: URL[] = [];
  const walk = async (dir: URL): Promise<void> => {
    for await (const entry of Deno.readDir(dir)) {
      const url = new URL(entry.name + (entry.isDirectory ? "/" : ""), dir);
      if (entry.isDirectory) await walk(url);
      else if (entry.name.endsWith("_test.ts")) out.push(url);
    }
  };
  for (const folder of FOLDERS) await walk(new URL(`${folder}/`, root));
  return out.sort((a, b) => a.href.localeCompare(b.href));
}

/** Imports the test files of shard `index` (of `count`), which registers their tests. */
export async function importShard(index: number, count: number): Promise<void> {
  const files = await testFiles();
  for (let i = index; i < files.length; i += count) await import(files[i].href);
}
