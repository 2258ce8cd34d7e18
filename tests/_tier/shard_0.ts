import { importShard } from "./shard.ts";

await importShard(0, 2);
