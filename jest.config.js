/** Jest runs TypeScript through swc (type checking is `npm run typecheck`). */
const swc = [
  "@swc/jest",
  {
    jsc: {
      parser: { syntax: "typescript", decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      target: "es2022",
    },
    module: { type: "commonjs" },
    sourceMaps: "inline",
  },
];

/** The workspaces by name, from source (as tsconfig.json's paths): tests need no build of them. */
const moduleNameMapper = {
  "^@taskplans/contract$": "<rootDir>/generated/index.ts",
  "^@taskplans/tls$": "<rootDir>/tls/src/index.ts",
  "^@taskplans/client$": "<rootDir>/clients/ts/src/index.ts",
  "^@taskplans/mcp$": "<rootDir>/mcp/src/index.ts",
  "^@taskplans/cli$": "<rootDir>/cli/src/index.ts",
};

/** One Jest project: the test files under `folder`, run through swc with the workspaces by name. */
function project(displayName, folder, extra = {}) {
  return {
    displayName,
    testEnvironment: "node",
    transform: { "^.+\\.(t|j)s$": swc },
    transformIgnorePatterns: ["/node_modules/(?!jose/|marked/)"],
    testMatch: [`<rootDir>/${folder}/**/*.test.ts`],
    moduleNameMapper,
    ...extra,
  };
}

module.exports = {
  testEnvironment: "node",
  // Integration tests start real servers; the fault scenarios run for tens of seconds.
  testTimeout: 120_000,
  // jose and marked are ESM-only; swc turns them into CommonJS like our own files.
  transform: { "^.+\\.(t|j)s$": swc },
  transformIgnorePatterns: ["/node_modules/(?!jose/|marked/)"],
  // Each project is one folder tree, so every test file belongs to exactly one project and the root's
  // `npm test` (scripts/check.sh) runs each once. The service's tests are in test/, grouped by what
  // they test (docs/testing.md); each workspace that can test itself alone has its own project, which
  // its `npm test -w <workspace>` runs.
  projects: [
    project("unit", "test/unit"),
    project("integration", "test/integration", {
      globalSetup: "<rootDir>/test/harness/servers/global-setup.ts",
      globalTeardown: "<rootDir>/test/harness/servers/global-teardown.ts",
    }),
    project("cli", "cli/test"),
    project("mcp", "mcp/test"),
    project("client", "clients/ts/test"),
    // `npm run test:galera` (after `npm test` in .ci/run): the service on a 3-node Galera cluster.
    project("galera", "test/galera", {
      globalSetup: "<rootDir>/test/galera/global-setup.ts",
      globalTeardown: "<rootDir>/test/harness/servers/global-teardown.ts",
    }),
  ],
};
