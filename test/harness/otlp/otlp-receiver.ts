import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pythonVenv } from "../packages/client-packages";
import { freePort } from "../servers/free-port";
import { stopProcess, waitFor } from "../servers/processes";
import { repoRoot } from "../servers/repo-root";
import { tracked } from "../servers/started-processes";

const ROOT = repoRoot();

/** A span as the receiver decoded it (ids in hex; attributes' values as sent). */
export interface ReceivedSpan {
  readonly service: string;
  readonly scope: string;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
  readonly name: string;
  readonly kind: number;
  readonly start: number;
  readonly end: number;
  readonly status: number;
  readonly attributes: Readonly<Record<string, unknown>>;
}

/** The test OTLP/gRPC receiver (test/harness/otlp/receiver.py) on a free port. */
export interface OtlpReceiver {
  /** `http://127.0.0.1:<port>`, what OTEL_EXPORTER_OTLP_ENDPOINT names. */
  readonly endpoint: string;
  spans(): ReceivedSpan[];
  /** Resolves the spans once `done` holds for them (a hang guard, not a timing assertion). */
  until(what: string, done: (spans: ReceivedSpan[]) => boolean, limitMs?: number): Promise<ReceivedSpan[]>;
  stop(): Promise<void>;
}

export async function startOtlpReceiver(dir: string): Promise<OtlpReceiver> {
  const requirements = join(ROOT, "test", "harness", "otlp", "requirements.txt");
  const venv = await pythonVenv("otlp-receiver", requirements);
  const port = await freePort();
  const file = join(dir, `spans-${port}.jsonl`);
  const child: ChildProcess = tracked(
    spawn(
      join(venv, "bin", "python"),
      [join(ROOT, "test", "harness", "otlp", "receiver.py"), String(port), file],
      {
        stdio: ["ignore", "pipe", "inherit"],
      },
    ),
    `OTLP receiver on ${port}`,
  );
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  await waitFor(
    "the OTLP receiver",
    async () => {
      if (child.exitCode !== null) throw new Error(`the OTLP receiver exited with ${child.exitCode}`);
      return output.includes(`listening ${port}`);
    },
    30_000,
  );
  const spans = (): ReceivedSpan[] =>
    existsSync(file)
      ? readFileSync(file, "utf8")
          .split("\n")
          .filter(Boolean)
          .map((line) => JSON.parse(line) as ReceivedSpan)
      : [];
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    async until(what, done, limitMs = 20_000) {
      await waitFor(what, async () => done(spans()), limitMs).catch((error: Error) => {
        throw new Error(
          `${error.message}; received: ${JSON.stringify(spans().map((s) => [s.service, s.name]))}`,
        );
      });
      return spans();
    },
    stop: () => stopProcess(child, 5_000),
  };
}
