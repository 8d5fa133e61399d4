// better-auth's side of authkit's peer benchmark (bench/cmd/peerbench, make
// bench-peers): its handler on node:http, users and accounts in PostgreSQL,
// sessions in PostgreSQL or in Redis (secondaryStorage), passwords by its
// default hasher (scrypt N=16384 r=16 p=1, node:crypto). Configuration only;
// every line of logic is better-auth's. Environment:
//
//   PORT            loopback port to listen on (required: the base URL names it)
//   DATABASE_URL    PostgreSQL; PG_SCHEMA the schema to use (migrated here)
//   SESSIONS        postgres (default) or redis
//   REDIS_URL       Redis, with SESSIONS=redis; REDIS_PREFIX starts every key
//   RATE_LIMIT      on: sign-in limited to 10 per 15 minutes per address,
//                   authkit's default, in memory or (SESSIONS=redis) in Redis;
//                   off (default): none
//   SEED_USERS, SEED_SESSIONS  users to create, and sessions for each, before listening
//   STOP_ON_STDIN_EOF=1  stop when standard input ends (the driver's pipe)
//
// Once listening it prints one JSON line: {"addr", "pid", "seeded", "seedSeconds"}.
import http from "node:http";
import pg from "pg";
import Redis from "ioredis";
import { betterAuth } from "better-auth";
import { getMigrations } from "better-auth/db/migration";
import { toNodeHandler } from "better-auth/node";

const env = process.env;
if (env.STOP_ON_STDIN_EOF === "1") {
  process.stdin.on("end", () => process.exit(0));
  process.stdin.resume();
}
const port = Number(env.PORT);
if (!port) throw new Error("PORT is required");
const baseURL = `http://127.0.0.1:${port}`;
const pool = new pg.Pool({
  connectionString: env.DATABASE_URL,
  options: `-c search_path=${env.PG_SCHEMA || "public"}`,
  max: 25, // sqlxstore's default pool size on authkit's side
});

let redis;
let secondaryStorage;
if ((env.SESSIONS || "postgres") === "redis") {
  redis = new Redis(env.REDIS_URL);
  const p = env.REDIS_PREFIX || "betterauth-peerbench:";
  secondaryStorage = {
    get: (key) => redis.get(p + key),
    getAndDelete: (key) => redis.getdel(p + key),
    set: (key, value, ttl) => (ttl ? redis.set(p + key, value, "EX", ttl) : redis.set(p + key, value)),
    delete: (key) => redis.del(p + key),
    increment: async (key, ttl) => {
      const [[err, n]] = await redis.multi().incr(p + key).expire(p + key, ttl, "NX").exec();
      if (err) throw err;
      return n;
    },
  };
}

const limited = env.RATE_LIMIT === "on";
const options = {
  baseURL,
  secret: env.BETTER_AUTH_SECRET,
  database: pool,
  secondaryStorage,
  emailAndPassword: { enabled: true },
  rateLimit: {
    enabled: limited,
    customRules: { "/sign-in/email": { window: 900, max: 10 } },
  },
  telemetry: { enabled: false },
  logger: { level: "error" },
};
const { runMigrations } = await getMigrations(options);
await runMigrations();
const auth = betterAuth(options);

await auth.api.signUpEmail({
  body: { email: "bench@example.com", password: "correct horse battery staple", name: "Bench" },
});

// Seeding: users with sessions, each made as a sign-in makes it
// (internalAdapter.createSession), without the password check; SEED_CONCURRENCY (default 16) at a time.
const seedUsers = Number(env.SEED_USERS || 0);
const seedEach = Number(env.SEED_SESSIONS || 0);
const started = performance.now();
if (seedUsers > 0 && seedEach > 0) {
  const { internalAdapter } = await auth.$context;
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < seedUsers; i = next++) {
      const u = await internalAdapter.createUser({
        email: `seed-${String(i).padStart(6, "0")}@example.com`,
        name: "Seed",
        emailVerified: true,
      });
      for (let j = 0; j < seedEach; j++) await internalAdapter.createSession(u.id, true);
    }
  };
  await Promise.all(Array.from({ length: Number(env.SEED_CONCURRENCY || 16) }, worker));
}
const seedSeconds = (performance.now() - started) / 1000;

const server = http.createServer(toNodeHandler(auth));
server.keepAliveTimeout = 60_000;
server.listen(port, "127.0.0.1", () => {
  process.stdout.write(
    JSON.stringify({ addr: `127.0.0.1:${port}`, pid: process.pid, seeded: seedUsers * seedEach, seedSeconds }) + "\n",
  );
});
const stop = () => {
  server.close();
  server.closeAllConnections();
  Promise.allSettled([pool.end(), redis?.quit()]).then(() => process.exit(0));
};
process.stdin.removeAllListeners("end");
if (env.STOP_ON_STDIN_EOF === "1") process.stdin.on("end", stop);
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
