import fc from "fast-check";
import { type Sut, trace } from "../../harness/model/plan-checks";
import { PlanModel } from "../../harness/model/plan-model";
import type { Step } from "../../harness/model/plan-write-steps";
import { firstStep, planStep } from "../../harness/model/plan-steps";
import { DATABASES, startTestApp, type TestApp } from "../../harness/servers/test-app";

/**
 * Differential property test of the write paths (DESIGN.md "Testing", STYLE.md habit 12): seeded
 * random sequences of create, save, append, replace, edit, restore, revert, delete and partial
 * reads on one task, with hostile content, run through the generated client against a real server
 * on SQLite and on MariaDB, and compared after every step with an independent model
 * (test/harness/model/plan-model.ts). fast-check shrinks a failing sequence; the report prints the seed,
 * the shrunk steps and how to replay them.
 *
 * A bounded run is part of `npm test`. Longer or targeted runs:
 *   PROPERTY_RUNS=500 npx jest --selectProjects integration test/integration/write-path/write-paths.property.test.ts
 *   PROPERTY_SEED=<seed> PROPERTY_PATH=<path> PROPERTY_REPLAY_PATH=<replayPath> ... (replays one failure)
 * PROPERTY_TRACE=1 prints every step and its outcome; PROPERTY_MAX_STEPS (default 30) bounds a
 * sequence; PROPERTY_COALESCE_WINDOW_MS (default one hour, longer than any run, so every write of
 * the same author coalesces; 0 never coalesces) and PROPERTY_CONTENT_AT_HEAD=true select server
 * settings the model knows how to follow.
 */

const env = process.env;
const SEED = Number(env.PROPERTY_SEED ?? 20_261_201);
const RUNS = Number(env.PROPERTY_RUNS ?? 80);
const MAX_STEPS = Number(env.PROPERTY_MAX_STEPS ?? 30);
const WINDOW_MS = env.PROPERTY_COALESCE_WINDOW_MS ?? "3600000";
const PATH = env.PROPERTY_PATH || undefined;
const REPLAY_PATH = env.PROPERTY_REPLAY_PATH || undefined;
// Shrinking replays sequences against the real server, which takes longer than the run itself.
const TIMEOUT_MS = Math.max(600_000, RUNS * 10_000);

const TEST_FILE = "test/integration/write-path/write-paths.property.test.ts";

/** The failure report: how to replay, then fast-check's own report (seed, shrunk steps, error). */
function report(
  label: string,
  details: fc.RunDetails<[Step | undefined, Iterable<fc.AsyncCommand<PlanModel, Sut, boolean>>]>,
): string {
  const message = fc.defaultReportMessage(details) ?? "";
  const replayPath = /replayPath="([^"]*)"/.exec(message)?.[1];
  const replay = [
    `PROPERTY_SEED=${details.seed}`,
    details.counterexamplePath ? `PROPERTY_PATH="${details.counterexamplePath}"` : "",
    replayPath ? `PROPERTY_REPLAY_PATH="${replayPath}"` : "",
    `npx jest --selectProjects integration --maxWorkers=1 ${TEST_FILE} -t "${label}"`,
  ];
  const error =
    details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
  return `write paths diverged from the model on ${label} (seed ${details.seed}).\nReplay: ${replay.filter((p) => p !== "").join(" ")}\n\n${message}\n\nShrunk failure: ${error}`;
}

describe.each(DATABASES)("write paths against an independent model on $label", ({ label, dialect }) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp(dialect, {
      env: {
        PLAN_COALESCE_WINDOW_MS: WINDOW_MS,
        // The history budget is not part of the model; sequences of near-limit plans would reach it.
        PLAN_HISTORY_MAX_BYTES: "0",
        ...(env.PROPERTY_CONTENT_AT_HEAD
          ? { PLAN_REVISION_CONTENT_AT_HEAD: env.PROPERTY_CONTENT_AT_HEAD }
          : {}),
      },
    });
  });
  afterAll(() => app.stop());

  it(
    `every step leaves content, sizes, version, revisions and the change stream as the model says (seed ${SEED}, ${RUNS} runs)`,
    async () => {
      const steps = fc.commands([planStep], { maxCommands: MAX_STEPS, size: "max", replayPath: REPLAY_PATH });
      const property = fc.asyncProperty(firstStep, steps, async (first, rest) => {
        const sequence = first ? [first, ...rest] : [...rest];
        const taskId = await app.newTask();
        const setup = () => ({
          model: new PlanModel(Number(WINDOW_MS) > 0),
          real: { plans: app.plans, taskId, tokens: new Map() } satisfies Sut,
        });
        const traced = sequence.map((step) => ({
          check: (model: PlanModel) => step.check(model),
          run: (model: PlanModel, real: Sut) => (trace(String(step)), step.run(model, real)),
          toString: () => String(step),
        }));
        await fc.asyncModelRun(setup, traced);
      });
      const details = await fc.check(property, { seed: SEED, numRuns: RUNS, path: PATH });
      if (details.failed) throw new Error(report(label, details));
    },
    TIMEOUT_MS,
  );
});
