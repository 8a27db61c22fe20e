import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * A pod's network: its own network namespace with one address on a bridge shared by every pod of the
 * test, as a cluster gives each pod its own IP. Ports the chart fixes (50051, 9464) then do not clash
 * between replicas or with anything else on the machine.
 */
export interface Pod {
  readonly name: string;
  readonly address: string;
  /** Prefix for a command run inside the namespace (`ip netns exec <ns>`). */
  readonly exec: readonly string[];
  /** Name -> address entries the pod resolves (its /etc/hosts, as cluster DNS would answer). */
  setHosts(entries: Readonly<Record<string, string>>): void;
  /** Partitions the pod from these addresses: packets both ways are dropped silently (iptables). */
  cut(addresses: readonly string[]): void;
  /** Heals a cut. */
  heal(addresses: readonly string[]): void;
  /**
   * Limits what reaches the pod from `address` to `kbit` per second (tc: an htb class on the pod's
   * link, chosen by a u32 filter on the source; nothing is dropped, it queues; everything else
   * passes at full speed), or lifts the limit (null). Each answer from that address then takes
   * longer to arrive, in proportion to its size. (This kernel has no netem to add a plain delay.)
   */
  throttle(address: string, kbit: number | null): void;
}

/** The bridge the pods hang off; servers the pods reach (MariaDB, Redis) bind to `hostAddress`. */
export interface PodNetwork {
  readonly hostAddress: string;
  addPod(): Pod;
  /** One more address of the host on the bridge, for a server that needs its own. */
  addHostAddress(): string;
  /** Deletes every namespace, link and hosts file this network created, nothing else. */
  close(): void;
}

function ip(...args: string[]): void {
  const run = spawnSync("ip", args, { encoding: "utf8" });
  if (run.status !== 0) {
    throw new Error(
      `'ip ${args.join(" ")}' failed: ${run.stderr.trim() || run.error?.message}. ` +
        "These tests need root and network namespaces (iproute2); they are never skipped.",
    );
  }
}

function tc(...args: string[]): void {
  const run = spawnSync("tc", args, { encoding: "utf8" });
  if (run.status !== 0)
    throw new Error(`'tc ${args.join(" ")}' failed: ${run.stderr.trim() || run.error?.message}`);
}

function iptables(ns: string, ...rule: string[]): void {
  const run = spawnSync("ip", ["netns", "exec", ns, "iptables", "-w", ...rule], { encoding: "utf8" });
  if (run.status !== 0) {
    throw new Error(
      `iptables ${rule.join(" ")} in ${ns} failed: ${run.stderr.trim() || run.error?.message} (apt-get install iptables)`,
    );
  }
}

/** Creates a bridge on a random 10.x.y.0/24 subnet not routed on this machine. */
export function createPodNetwork(): PodNetwork {
  // Six random hex characters (link names stay within Linux's 15), none in use: a network whose
  // namespaces a process still holds keeps its links after close, and a short pid-and-counter tag
  // once met such a leftover ("File exists").
  const links = spawnSync("ip", ["-o", "link"], { encoding: "utf8" }).stdout ?? "";
  const spaces = spawnSync("ip", ["netns", "list"], { encoding: "utf8" }).stdout ?? "";
  let tag = "";
  do tag = randomBytes(3).toString("hex");
  while (links.includes(`tpb${tag}`) || links.includes(`tpv${tag}`) || spaces.includes(`tpn${tag}`));
  const routes = spawnSync("ip", ["-4", "route"], { encoding: "utf8" }).stdout ?? "";
  let subnet = "";
  do subnet = `10.${100 + Math.floor(Math.random() * 150)}.${Math.floor(Math.random() * 256)}`;
  while (routes.includes(`${subnet}.`));
  const bridge = `tpb${tag}`;
  ip("link", "add", bridge, "type", "bridge");
  const namespaces: string[] = [];
  try {
    ip("addr", "add", `${subnet}.1/24`, "dev", bridge);
    ip("link", "set", bridge, "up");
  } catch (error) {
    spawnSync("ip", ["link", "del", bridge]);
    throw error;
  }
  let hostAddresses = 200;
  return {
    hostAddress: `${subnet}.1`,
    addHostAddress() {
      const address = `${subnet}.${hostAddresses++}`;
      ip("addr", "add", `${address}/24`, "dev", bridge);
      return address;
    },
    addPod() {
      const index = namespaces.length + 2;
      const ns = `tpn${tag}-${index}`;
      const [outside, inside] = [`tpv${tag}h${index}`, `tpv${tag}p${index}`];
      ip("netns", "add", ns);
      namespaces.push(ns);
      ip("link", "add", outside, "type", "veth", "peer", "name", inside);
      ip("link", "set", inside, "netns", ns);
      ip("link", "set", outside, "master", bridge);
      ip("link", "set", outside, "up");
      ip("-n", ns, "addr", "add", `${subnet}.${index}/24`, "dev", inside);
      ip("-n", ns, "link", "set", inside, "up");
      ip("-n", ns, "link", "set", "lo", "up");
      return {
        name: ns,
        address: `${subnet}.${index}`,
        exec: ["ip", "netns", "exec", ns],
        setHosts(entries) {
          // `ip netns exec` bind-mounts /etc/netns/<ns>/hosts over /etc/hosts for the command.
          const dir = join("/etc/netns", ns);
          mkdirSync(dir, { recursive: true });
          const lines = Object.entries(entries).map(([name, address]) => `${address}\t${name}`);
          writeFileSync(join(dir, "hosts"), ["127.0.0.1\tlocalhost", ...lines, ""].join("\n"));
        },
        cut(addresses) {
          for (const address of addresses) {
            iptables(ns, "-A", "OUTPUT", "-d", address, "-j", "DROP");
            iptables(ns, "-A", "INPUT", "-s", address, "-j", "DROP");
          }
        },
        heal(addresses) {
          for (const address of addresses) {
            iptables(ns, "-D", "OUTPUT", "-d", address, "-j", "DROP");
            iptables(ns, "-D", "INPUT", "-s", address, "-j", "DROP");
          }
        },
        throttle(address, kbit) {
          // The host's end of the pair sends what reaches the pod.
          if (kbit === null) {
            tc("qdisc", "del", "dev", outside, "root");
            return;
          }
          tc("qdisc", "add", "dev", outside, "root", "handle", "1:", "htb", "default", "10", "r2q", "100000");
          tc("class", "add", "dev", outside, "parent", "1:", "classid", "1:10", "htb", "rate", "10gbit");
          const rate = `${kbit}kbit`;
          tc(
            "class",
            "add",
            "dev",
            outside,
            "parent",
            "1:",
            "classid",
            "1:20",
            "htb",
            "rate",
            rate,
            "ceil",
            rate,
          );
          tc(
            "filter",
            "add",
            "dev",
            outside,
            "parent",
            "1:",
            "protocol",
            "ip",
            "prio",
            "1",
            "u32",
            "match",
            "ip",
            "src",
            `${address}/32`,
            "flowid",
            "1:20",
          );
        },
      };
    },
    close() {
      for (const ns of namespaces) {
        spawnSync("ip", ["netns", "del", ns]); // its veth end goes with it, and so does the pair
        rmSync(join("/etc/netns", ns), { recursive: true, force: true });
      }
      spawnSync("ip", ["link", "del", bridge]);
    },
  };
}
