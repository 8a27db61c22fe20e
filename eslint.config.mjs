import js from "@eslint/js";
import tseslint from "typescript-eslint";

// Layering (DESIGN.md): grpc -> plans -> (storage, locking, auth). plans/ owns its model and ports
// (plans/ports: records, PlanStore, TaskLock and the failures they report); storage/ and locking/
// implement them and import nothing else of plans/. Only storage/ imports TypeORM, only locking/
// imports Redis, only grpc/ imports grpc-js and the generated stubs; handlers never reach storage.
const layer = (paths, patterns) => ({ "no-restricted-imports": ["error", { paths, patterns }] });

export default tseslint.config(
  {
    ignores: [
      "dist/",
      "dist-bench/",
      "generated/",
      "clients/ts/dist/",
      "clients/ts/src/generated/",
      "clients/python/",
      "node_modules/",
      "var/",
      "coverage/",
      "*.js",
      "*.mjs",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", ignoreRestSiblings: true },
      ],
    },
  },
  {
    files: ["src/plans/**/*.ts"],
    rules: layer(
      ["typeorm", "@grpc/grpc-js", "ioredis", "redlock", "mysql2", "better-sqlite3"],
      ["**/grpc/*", "**/watch/*", "**/storage/*", "**/locking/*", "**/generated/**"],
    ),
  },
  {
    // The ports stand alone: the rules depend on them, never the other way round.
    files: ["src/plans/ports/*.ts"],
    rules: layer(
      ["typeorm", "@grpc/grpc-js", "ioredis", "redlock", "mysql2", "better-sqlite3"],
      ["../*", "**/grpc/*", "**/watch/*", "**/storage/*", "**/locking/*", "**/generated/**"],
    ),
  },
  {
    // Handlers call the use cases in plans/ and watch/; they never reach storage or the lock.
    files: ["src/grpc/**/*.ts"],
    rules: layer(
      ["typeorm", "ioredis", "redlock", "mysql2", "better-sqlite3"],
      ["**/storage/*", "**/locking/*"],
    ),
  },
  {
    // storage/ and locking/ implement the ports of plans/ and import nothing else of it.
    files: ["src/storage/**/*.ts"],
    rules: layer(
      ["@grpc/grpc-js", "ioredis"],
      ["**/grpc/*", "**/plans/*", "!**/plans/ports", "**/locking/*", "**/watch/*", "**/generated/**"],
    ),
  },
  {
    files: ["src/locking/**/*.ts"],
    rules: layer(
      ["@grpc/grpc-js", "typeorm"],
      ["**/grpc/*", "**/plans/*", "!**/plans/ports", "**/storage/*", "**/watch/*", "**/generated/**"],
    ),
  },
  {
    // Change streams sit between the handlers and the rules: they use plans/ (and its ports, the
    // Broadcast that locking/ implements over Redis), never the wire, storage or Redis itself.
    files: ["src/watch/**/*.ts"],
    rules: layer(
      ["@grpc/grpc-js", "typeorm", "mysql2", "better-sqlite3", "ioredis"],
      ["**/grpc/*", "**/storage/*", "**/locking/*", "**/generated/**"],
    ),
  },
  {
    // The MCP server is a client of the service: it reaches plans only through the client package.
    files: ["src/mcp/**/*.ts"],
    rules: layer(
      ["typeorm", "ioredis", "mysql2", "better-sqlite3"],
      ["**/plans/*", "**/storage/*", "**/locking/*", "**/auth/*", "**/grpc/*", "**/generated/ts/**"],
    ),
  },
  {
    files: ["src/auth/**/*.ts", "src/config/**/*.ts"],
    rules: layer(
      ["@grpc/grpc-js", "typeorm"],
      ["**/grpc/*", "**/plans/*", "**/storage/*", "**/watch/*", "**/generated/**"],
    ),
  },
  {
    // The client package (clients/ts) ships alone: nothing from the server, nothing outside the package.
    files: ["clients/ts/src/**/*.ts"],
    rules: layer(
      ["typeorm", "ioredis", "mysql2", "better-sqlite3", "pino", "zod", "jose", "@modelcontextprotocol/sdk"],
      ["../../*", "**/src/grpc/*", "**/src/plans/*", "**/generated/ts/**"],
    ),
  },
);
