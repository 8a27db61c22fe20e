// The import gate run by `npm run check` (scripts/check.sh) and `npm run lint`: arrows point inward
// (DESIGN.md "Dependencies point inward"; STYLE.md habit 15). Type-only imports are arrows too: a
// circle of types is still a circle for a reader, so `tsPreCompilationDeps` keeps them in the graph.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment:
        "Files of src/ (or of a tool in bench/) that import each other in a loop (type-only imports included) read as one knot: break it at the cause, usually by moving the shared declaration into a leaf module (bench/soak/types.ts).",
      from: { path: "^(src|bench)/" },
      to: { circular: true },
    },
    {
      name: "plans-imports-only-inward",
      severity: "error",
      comment:
        "plans/ is the domain: it declares the ports it uses (plans/ports/) and the adapters implement them. It never imports an adapter or the transport.",
      from: { path: "^src/plans/" },
      to: { path: "^src/(observability|storage|grpc|locking)/" },
    },
    {
      name: "plans-rules-are-pure",
      severity: "error",
      comment:
        "plans/rules/ holds the pure rules of a plan (validation, limits, composition, exact edits, versions, lines): they import only each other, the domain's errors and records, the text helpers and node:crypto; no I/O, and nothing above them (pipeline, writes, changes, transfer, the facades).",
      from: { path: "^src/plans/rules/" },
      to: {
        pathNot: [
          "^src/plans/rules/",
          "^src/plans/errors\\.ts$",
          "^src/plans/ports/records\\.ts$",
          "^src/text/",
          "^src/auth/caller\\.ts$",
          "^crypto$",
          "^node:crypto$",
        ],
      },
    },
    {
      name: "plans-rooms-point-down",
      severity: "error",
      comment:
        "The rooms of plans/ stand on floors: the facades (plans/*.ts) over writes/ and transfer/, over pipeline/ and changes/, over rules/, over ports/ and errors.ts. A lower room never imports a higher one.",
      from: { path: "^src/plans/(pipeline|changes)/" },
      to: { path: "^src/plans/(writes|transfer)/|^src/plans/[^/]+-(service|queries)\\.ts$" },
    },
    {
      name: "no-relative-import-across-packages",
      severity: "error",
      comment:
        "A workspace (tls/ = @taskplans/tls, generated/ = @taskplans/contract, clients/ts/ = @taskplans/client, mcp/ = @taskplans/mcp, cli/ = @taskplans/cli) is imported by its package name, never by a relative path into its tree: each packs and installs alone (STYLE.md habit 13).",
      from: { path: "^(tls|generated|clients/ts|mcp|cli)/" },
      to: { pathNot: "^$1/", dependencyTypesNot: ["aliased"] },
    },
    {
      name: "no-relative-import-of-a-workspace",
      severity: "error",
      comment:
        "The service (src/, and its test/, bench/, scripts/) imports a workspace by its package name (@taskplans/tls, @taskplans/contract, @taskplans/client, @taskplans/mcp, @taskplans/cli), never by a relative path into its tree.",
      from: { path: "^(src|test|bench|scripts)/" },
      to: { path: "^(tls|generated|clients/ts|mcp|cli)/", dependencyTypesNot: ["aliased"] },
    },
    {
      name: "server-never-imports-a-client",
      severity: "error",
      comment:
        "The server depends on the contract (@taskplans/contract), never on a client of itself (@taskplans/client, @taskplans/mcp): DESIGN.md, STYLE.md habit 13.",
      from: { path: "^src/" },
      to: { path: "^(clients|mcp|cli)/" },
    },
    {
      name: "cli-imports-only-the-client",
      severity: "error",
      comment:
        "The command-line client (cli/, @taskplans/cli) is a client of the service: it imports the client package (@taskplans/client), never the server (src/) nor the contract's generated tree directly.",
      from: { path: "^cli/" },
      to: { path: "^(src|generated|mcp)/" },
    },
  ],
  options: {
    includeOnly:
      "^(src|test|bench|scripts|tls/src|generated|clients/ts/(src|test)|clients/conformance/ts|mcp/(src|test)|cli/(src|test))/",
    exclude: { path: "(^|/)(dist|dist-bench|node_modules)/" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    doNotFollow: { path: "node_modules" },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
