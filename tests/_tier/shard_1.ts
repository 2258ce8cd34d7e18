import { importShard } from "./shard.ts";

await importShard(1, 2);
