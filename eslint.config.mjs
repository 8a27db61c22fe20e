import js from "@eslint/js";
import tseslint from "typescript-eslint";

// Layering (DESIGN.md): grpc -> plans -> (storage, locking, auth). plans/ owns its model and ports
// (plans/ports: records, PlanStore, TaskLock and the failures they report); storage/ and locking/
// implement them and import nothing else of plans/. Only storage/ imports TypeORM, only locking/
// imports Redis, only grpc/ imports grpc-js and the generated stubs; handlers never reach storage.
// The contract (@taskplans/contract: the generated tree and its rich-status codec) is a workspace
// shared with the client package (@taskplans/client), which the server never imports; the MCP server
// (@taskplans/mcp) is a client of the service. .dependency-cruiser.js forbids relative imports
// across workspaces.
const layer = (paths, patterns) => ({ "no-restricted-imports": ["error", { paths, patterns }] });
const PLANS_PATHS = ["typeorm", "@grpc/grpc-js", "ioredis", "redlock", "mysql2", "better-sqlite3"];
const PLANS_PATTERNS = [
  "**/grpc/*",
  "**/watch/*",
  "**/storage/*",
  "**/locking/*",
  "**/generated/**",
  "**/clients/**",
  "@taskplans/*",
];

export default tseslint.config(
  {
    ignores: [
      "dist/",
      "dist-bench/",
      "generated/ts/",
      "generated/es/",
      "generated/dist/",
      "mcp/dist/",
      "cli/dist/",
      "clients/ts/dist/",
      "tls/dist/",
      "clients/python/",
      "node_modules/",
      "var/",
      "coverage/",
      "*.js",
      "*.mjs",
      "test/kube/jest.config.js",
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
    rules: {
      ...layer(PLANS_PATHS, PLANS_PATTERNS),
      // One pipeline runs every write (write-pipeline.ts): no use case opens a transaction itself.
      "no-restricted-syntax": [
        "error",
        {
          selector: "CallExpression[callee.property.name='inTransaction']",
          message: "plan writes run through WritePipeline.execute (write-pipeline.ts)",
        },
      ],
    },
  },
  {
    files: ["src/plans/pipeline/write-pipeline.ts"],
    rules: { "no-restricted-syntax": "off" },
  },
  {
    // A write's request, decision and commit are pure (DESIGN.md, STYLE.md 11): the request's checks,
    // what it reads and how it decides, with no port that does I/O, no pipeline and no logging; so
    // are the rules they rest on.
    files: ["src/plans/writes/*.ts", "src/plans/rules/*.ts", "src/plans/pipeline/history-budget.ts"],
    rules: layer(PLANS_PATHS, [
      { group: PLANS_PATTERNS, message: "plans/ never imports an adapter, the wire or the generated tree" },
      {
        group: [
          "**/ports/plan-store",
          "**/ports/task-lock",
          "**/ports/broadcast",
          "**/pipeline/write-pipeline",
          "**/*-service",
        ],
        message: "commands and decisions are pure: the pipeline does the I/O",
      },
      {
        group: ["**/observability/*", "pino"],
        message: "commands and decisions are pure: no logging or metrics",
      },
    ]),
  },
  {
    // Text measurement and the whitespace rule are shared by the rules and the store: a leaf.
    files: ["src/text/**/*.ts"],
    rules: layer([], ["../*"]),
  },
  {
    // The ports stand alone: the rules depend on them, never the other way round.
    files: ["src/plans/ports/*.ts"],
    rules: layer(
      ["typeorm", "@grpc/grpc-js", "ioredis", "redlock", "mysql2", "better-sqlite3"],
      [
        "../*",
        "**/grpc/*",
        "**/watch/*",
        "**/storage/*",
        "**/locking/*",
        "**/generated/**",
        "**/clients/**",
        "@taskplans/*",
      ],
    ),
  },
  {
    // Handlers call the use cases in plans/ and watch/; they never reach storage or the lock.
    files: ["src/grpc/**/*.ts"],
    rules: layer(
      ["typeorm", "ioredis", "redlock", "mysql2", "better-sqlite3", "@taskplans/client", "@taskplans/mcp"],
      ["**/storage/*", "**/locking/*", "**/clients/**"],
    ),
  },
  {
    // storage/ and locking/ implement the ports of plans/ and import nothing else of it.
    files: ["src/storage/**/*.ts"],
    rules: layer(
      ["@grpc/grpc-js", "ioredis"],
      [
        "**/grpc/*",
        "**/plans/*",
        "!**/plans/ports",
        "**/locking/*",
        "**/watch/*",
        "**/generated/**",
        "**/clients/**",
        "@taskplans/*",
      ],
    ),
  },
  {
    files: ["src/locking/**/*.ts"],
    rules: layer(
      ["@grpc/grpc-js", "typeorm"],
      [
        "**/grpc/*",
        "**/plans/*",
        "!**/plans/ports",
        "**/storage/*",
        "**/watch/*",
        "**/generated/**",
        "**/clients/**",
        "@taskplans/*",
      ],
    ),
  },
  {
    // Change streams sit between the handlers and the rules: they use plans/ (and its ports, the
    // Broadcast that locking/ implements over Redis), never the wire, storage or Redis itself.
    files: ["src/watch/**/*.ts"],
    rules: layer(
      ["@grpc/grpc-js", "typeorm", "mysql2", "better-sqlite3", "ioredis"],
      ["**/grpc/*", "**/storage/*", "**/locking/*", "**/generated/**", "**/clients/**", "@taskplans/*"],
    ),
  },
  {
    // The MCP server (@taskplans/mcp) is a client of the service: it reaches plans only through the
    // client package, never the contract's generated tree directly nor anything of the server.
    files: ["mcp/src/**/*.ts"],
    rules: layer(
      ["typeorm", "ioredis", "mysql2", "better-sqlite3", "@taskplans/contract"],
      [{ regex: "^\\.\\./\\.\\./", message: "the MCP package imports only itself and its dependencies" }],
    ),
  },
  {
    // The command-line client (@taskplans/cli, cli/) is a client of the service like the MCP server:
    // it reaches plans only through the client package, never the generated tree nor the server.
    files: ["cli/src/**/*.ts"],
    rules: layer(
      ["typeorm", "ioredis", "mysql2", "better-sqlite3", "@taskplans/contract", "@taskplans/mcp"],
      [{ regex: "^\\.\\./\\.\\./", message: "the CLI package imports only itself and its dependencies" }],
    ),
  },
  {
    // Configuration and identity stand below the service: of the workspaces, only @taskplans/tls
    // (the setting files and ConfigError the configuration is read with).
    files: ["src/auth/**/*.ts", "src/config/**/*.ts"],
    rules: layer(
      ["@grpc/grpc-js", "typeorm"],
      [
        "**/grpc/*",
        "**/plans/*",
        "**/storage/*",
        "**/watch/*",
        "**/generated/**",
        "**/clients/**",
        "@taskplans/*",
        "!@taskplans/tls",
      ],
    ),
  },
  {
    // The rest of the server: the composition root, entry points, metrics, timers.
    files: ["src/*.ts", "src/observability/**/*.ts", "src/background/**/*.ts"],
    rules: layer(["@taskplans/client", "@taskplans/mcp"], ["**/clients/**"]),
  },
  {
    // The contract (@taskplans/contract, generated/): the generated tree and its rich-status codec,
    // shared by the server and the client package; it imports only its own files and the wire.
    files: ["generated/*.ts"],
    rules: layer(
      ["typeorm", "ioredis", "redlock", "mysql2", "better-sqlite3", "pino", "zod", "jose"],
      [{ regex: "^(\\.\\./|@taskplans/)", message: "the contract imports only its own files" }],
    ),
  },
  {
    // The client package (@taskplans/client, clients/ts) ships alone: of this repository it uses
    // only the contract, by its package name.
    files: ["clients/ts/src/**/*.ts"],
    rules: layer(
      [
        "typeorm",
        "ioredis",
        "mysql2",
        "better-sqlite3",
        "pino",
        "zod",
        "jose",
        "@modelcontextprotocol/sdk",
        "@taskplans/mcp",
      ],
      [
        {
          regex: "^\\.\\./",
          message: "the client package imports the contract by name (@taskplans/contract)",
        },
      ],
    ),
  },
);
