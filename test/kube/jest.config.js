/** `npm run test:kube` (scripts/kube/test.sh): the scenarios on the test cluster, one at a time. */
const base = require("../../jest.config.js");

module.exports = {
  rootDir: "../..",
  testEnvironment: "node",
  transform: base.transform,
  transformIgnorePatterns: base.transformIgnorePatterns,
  moduleNameMapper: base.projects[0].moduleNameMapper,
  testMatch: ["<rootDir>/test/kube/**/*.test.ts"],
  // A rollout under load, a rollback, disruptions: minutes per scenario.
  testTimeout: 900_000,
};
