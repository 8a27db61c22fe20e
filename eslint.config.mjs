import js from "@eslint/js";
import tseslint from "typescript-eslint";

// Layering (DESIGN.md): grpc -> plans -> (storage, locking, auth). Only storage/ imports TypeORM,
// only locking/ imports Redis, only grpc/ imports grpc-js and the generated stubs.
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
      ["**/grpc/*", "**/watch/*", "**/generated/**"],
    ),
  },
  {
    files: ["src/storage/**/*.ts", "src/locking/**/*.ts", "src/auth/**/*.ts", "src/config/**/*.ts"],
    rules: layer(["@grpc/grpc-js"], ["**/grpc/*", "**/plans/*", "**/watch/*", "**/generated/**"]),
  },
  {
    // Change streams sit between the handlers and the rules: they use plans/, storage/ records and
    // the Redis key formats, never the wire.
    files: ["src/watch/**/*.ts"],
    rules: layer(["@grpc/grpc-js", "typeorm", "mysql2", "better-sqlite3"], ["**/grpc/*", "**/generated/**"]),
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
    files: ["src/locking/**/*.ts", "src/auth/**/*.ts", "src/config/**/*.ts"],
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
