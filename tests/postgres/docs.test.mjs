// Every ```js postgres block of README.md and docs/, run as written with POSTGRES_URL naming
// a private Postgres cluster of its own (tests/engines/docs.mjs: it must exit 0 and print its
// output block).
import { startPostgres } from "../../tools/postgres-server.mjs";
import { runDocBlocks } from "../engines/docs.mjs";

runDocBlocks("postgres", { least: 1, start: () => startPostgres(), variable: "POSTGRES_URL" });
