import { readFileSync } from "node:fs";
import type { Io } from "./runtime";

/** The text of FILE, or of stdin when FILE is "-" or not given (UTF-8). */
export async function readInput(io: Io, file: string | undefined): Promise<string> {
  if (file !== undefined && file !== "-") return readFileSync(file, "utf8");
  const chunks: Buffer[] = [];
  for await (const chunk of io.stdin) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString("utf8");
}
