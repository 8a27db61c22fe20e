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

module.exports = {
  testEnvironment: "node",
  // Integration tests start real servers; the fault scenarios run for tens of seconds.
  testTimeout: 120_000,
  // jose and marked are ESM-only; swc turns them into CommonJS like our own files.
  transform: { "^.+\\.(t|j)s$": swc },
  transformIgnorePatterns: ["/node_modules/(?!jose/|marked/)"],
  projects: [
    {
      displayName: "unit",
      testEnvironment: "node",
      transform: { "^.+\\.(t|j)s$": swc },
      transformIgnorePatterns: ["/node_modules/(?!jose/|marked/)"],
      testMatch: ["<rootDir>/test/unit/**/*.test.ts"],
      moduleNameMapper,
    },
    {
      displayName: "integration",
      testEnvironment: "node",
      transform: { "^.+\\.(t|j)s$": swc },
      transformIgnorePatterns: ["/node_modules/(?!jose/|marked/)"],
      testMatch: ["<rootDir>/test/integration/**/*.test.ts"],
      moduleNameMapper,
      globalSetup: "<rootDir>/test/harness/servers/global-setup.ts",
      globalTeardown: "<rootDir>/test/harness/servers/global-teardown.ts",
    },
    {
      // `npm run test:galera` (after `npm test` in .ci/run): the service on a 3-node Galera cluster.
      displayName: "galera",
      testEnvironment: "node",
      transform: { "^.+\\.(t|j)s$": swc },
      transformIgnorePatterns: ["/node_modules/(?!jose/|marked/)"],
      testMatch: ["<rootDir>/test/galera/**/*.test.ts"],
      moduleNameMapper,
      globalSetup: "<rootDir>/test/galera/global-setup.ts",
      globalTeardown: "<rootDir>/test/harness/servers/global-teardown.ts",
    },
  ],
};
