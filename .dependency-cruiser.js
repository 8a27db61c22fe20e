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
        "Files of src/ that import each other in a loop (type-only imports included) read as one knot: break it at the cause, usually by moving the shared declaration into a leaf module.",
      from: { path: "^src/" },
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
  ],
  options: {
    includeOnly: "^src/",
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    doNotFollow: { path: "node_modules" },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
