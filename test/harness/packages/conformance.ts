import { spawn } from "node:child_process";
import { createClient, type TlsOptions } from "@taskplans/client";
import { startFailoverProxy, type FailoverProxy } from "../network/failover-proxy";
import { waitFor } from "../servers/processes";
import { type Replica, type ReplicaTls, startReplica } from "../servers/replica";
import { tracked } from "../servers/started-processes";

/**
 * What the conformance scenario's resilience steps run against (clients/conformance/README.md): a
 * second replica of the service on the same database, behind a proxy the test controls, and the
 * answers to the lines a program reads from stdin.
 */
export interface FailoverTarget {
  /** `TASKPLANS_FAILOVER_TARGET`. */
  readonly target: string;
  /** What the test did to the replica, in order (so a run that skipped a step cannot pass). */
  readonly events: readonly string[];
  /** Answers one printed line: the stdin line to send, or undefined when the program reads none. */
  answer(line: string, task: string): Promise<string | undefined>;
  stop(): Promise<void>;
}

export interface FailoverSetup {
  /** The main replica's address and how to reach it (the harness reads the plan's version there). */
  readonly mainTarget: string;
  readonly token: string;
  readonly tls?: TlsOptions;
  /** Environment of the second replica (database, auth, TLS), and how its health is checked. */
  readonly replicaEnv: Record<string, string>;
  readonly replicaTls?: ReplicaTls;
  readonly logDir: string;
  /** A token reaching the scenario's workspace that expires in `seconds`, and its `exp`. */
  readonly shortToken: (seconds: number) => Promise<{ token: string; exp: number }>;
}

export async function startFailoverTarget(setup: FailoverSetup): Promise<FailoverTarget> {
  // Two replicas: the proxy sends connections to one, and when the test takes it away, at once to
  // the other (as a Service does to its ready pods), while the one taken away restarts.
  const start = (name: string) =>
    startReplica(setup.replicaEnv, setup.logDir, null, {
      name,
      ...(setup.replicaTls ? { tls: setup.replicaTls } : {}),
    });
  // Both start at once; when one does not come up, the other is stopped before the error goes on.
  const started = await Promise.allSettled([start("failover-a"), start("failover-b")]);
  const replicas: Replica[] = [];
  for (const outcome of started) if (outcome.status === "fulfilled") replicas.push(outcome.value);
  const failed = started.find((outcome) => outcome.status === "rejected");
  if (failed) {
    await Promise.all(replicas.map((replica) => replica.stop()));
    throw failed.reason;
  }
  let serving = 0;
  const proxy: FailoverProxy = await startFailoverProxy(() => (replicas[serving] as Replica).port);
  const main = createClient(setup.mainTarget, {
    token: setup.token,
    retry: false,
    defaultTimeoutMs: 5_000,
    ...(setup.tls ? { tls: setup.tls } : {}),
  });
  let killing: Promise<void> = Promise.resolve();
  let restarting: Promise<void> = Promise.resolve();
  const events: string[] = [];

  // The serving replica goes away (`down`); new connections go to the other; it restarts meanwhile.
  const replace = async (down: (replica: Replica) => Promise<void>) => {
    await restarting;
    const gone = replicas[serving] as Replica;
    proxy.pause();
    await down(gone);
    proxy.cut();
    serving = 1 - serving;
    proxy.resume();
    restarting = gone.restart();
    restarting.catch(() => undefined); // awaited by the next replace() or stop(), which see its failure
  };

  return {
    target: `127.0.0.1:${proxy.port}`,
    events,
    async answer(line, task) {
      if (line.startsWith("failover_read:")) {
        const before = Number(/ version=(\d+)/.exec(line)?.[1] ?? NaN);
        proxy.holdAnswers();
        // Once the append has committed and its answer is held back: kill -9.
        killing = (async () => {
          await waitFor(
            "the append through the failover replica to commit",
            async () =>
              proxy.heldBytes() > 0 &&
              ((await main.plans.getPlan({ taskId: task })).plan?.version ?? 0) > before,
            20_000,
          );
          events.push("the append committed and its answer was held back");
          await replace((replica) => replica.kill());
          events.push("killed (SIGKILL); connections go to the other replica");
        })();
        killing.catch(() => undefined); // awaited at the next step, which sees its failure
        return "";
      }
      if (line.startsWith("watch_resume_open:")) {
        await killing;
        await replace((replica) => replica.stop()); // SIGTERM: its streams end UNAVAILABLE WATCH_DRAINING
        events.push("stopped (SIGTERM); connections go to the other replica");
        return "";
      }
      if (line.startsWith("watch_expired:")) {
        const { token, exp } = await setup.shortToken(3);
        events.push("short token sent");
        return `${token} ${exp}`;
      }
      return undefined;
    },
    async stop() {
      // Whatever failed was reported by the step that awaited it (or the program's own failure).
      await killing.catch(() => undefined);
      await restarting.catch(() => undefined);
      main.close();
      await proxy.close();
      await Promise.all(replicas.map((replica) => replica.stop()));
    },
  };
}

/**
 * Runs a conformance program to its end, answering the lines it reads from stdin with `answer`;
 * resolves its stdout, or throws with its output when it fails or outlasts `timeoutMs`.
 */
export function runConversation(
  argv: readonly string[],
  options: {
    env: NodeJS.ProcessEnv;
    cwd: string;
    timeoutMs: number;
    answer: (line: string) => Promise<string | undefined>;
  },
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = tracked(
      spawn(argv[0] ?? "", argv.slice(1), { env: options.env, cwd: options.cwd, stdio: "pipe" }),
      `conformance program ${argv.join(" ")}`,
    );
    let stdout = "";
    let stderr = "";
    let pending = "";
    let answering: Promise<void> = Promise.resolve();
    let failure: unknown = null;
    child.stdout?.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      pending += chunk.toString();
      for (let end = pending.indexOf("\n"); end >= 0; end = pending.indexOf("\n")) {
        const line = pending.slice(0, end);
        pending = pending.slice(end + 1);
        answering = answering.then(async () => {
          try {
            const reply = await options.answer(line);
            if (reply !== undefined) child.stdin?.write(`${reply}\n`);
          } catch (error) {
            failure ??= error;
            child.kill("SIGKILL");
          }
        });
      }
    });
    child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdin?.on("error", () => undefined); // a program that exits early
    const timer = setTimeout(() => {
      failure ??= new Error(`timed out after ${options.timeoutMs} ms`);
      child.kill("SIGKILL");
    }, options.timeoutMs);
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once("close", (code) => {
      clearTimeout(timer);
      void answering.then(() => {
        if (failure || code !== 0)
          reject(
            new Error(`${argv.join(" ")}: ${String(failure ?? `exited ${code}`)}\n${stdout}\n${stderr}`),
          );
        else resolve(stdout);
      });
    });
  });
}
