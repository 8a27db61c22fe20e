import { readdirSync, readFileSync } from "node:fs";

const CLOCK_TICKS_PER_SECOND = 100; // getconf CLK_TCK on Linux

/** CPU time (user + system) a process has used so far, in ms (from /proc, 10 ms resolution). */
export function processCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
}

/**
 * CPU time (ms) each kind of thread of a process has used so far, by thread name (/proc/<pid>/task):
 * the main thread under its process name ("node"), V8's workers (GC and the optimizing compiler,
 * "V8 DefaultWorke"), libuv's pool ("libuv-worker"), the main thread first. A thread that ended is
 * no longer counted, so take differences of threads that live through the measurement.
 */
export function threadCpuMs(pid: number): Map<string, number> {
  const byName = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
    } catch {
      continue; // ended between the listing and the read
    }
    const name = tid === String(pid) ? "main thread" : (/\((.*)\) /.exec(stat)?.[1] ?? "?");
    const fields = stat.split(") ")[1]?.split(" ") ?? [];
    const ms = ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
    byName.set(name, (byName.get(name) ?? 0) + ms);
  }
  return byName;
}

/** Resident and peak resident memory of a process, in MB (from /proc). */
export function memoryMb(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { rss: kb("VmRSS") / 1024, peak: kb("VmHWM") / 1024 };
}

/** Bytes a process has had read from the block device so far (/proc/<pid>/io read_bytes). */
export function bytesReadFromDisk(pid: number): number {
  const io = readFileSync(`/proc/${pid}/io`, "utf8");
  return Number(/read_bytes:\s+(\d+)/.exec(io)?.[1] ?? 0);
}

/** Read and write system calls a process has made so far (/proc/<pid>/io syscr, syscw). */
export function systemCalls(pid: number): { reads: number; writes: number } {
  const io = readFileSync(`/proc/${pid}/io`, "utf8");
  const count = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(io)?.[1] ?? 0);
  return { reads: count("syscr"), writes: count("syscw") };
}
