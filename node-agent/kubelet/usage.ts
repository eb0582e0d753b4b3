/**
 * Resource usage as the runtimes measure it: cumulative CPU time and the memory working
 * set of each running container (kubelet's `/metrics/resource` figures; the agent turns
 * two samples into a rate, as metrics-server does), and the same for the host.
 *
 * The process runtime reads `/proc`: a container is the session its process leads (it is
 * spawned detached, so `setsid`), its CPU time the user + system time of every live
 * process of that session plus what they collected from their reaped children, its
 * working set the sum of their resident sets (the process runtime puts pods in no cgroup,
 * so there is no cgroup `memory.current` to read; shared pages count once per process).
 * The host's figures are what runc reads for the root cgroup on cgroup v2: CPU time from
 * `/proc/stat`, working set = MemTotal - MemFree - Inactive(file) from `/proc/meminfo`.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';

/** A running container's cumulative figures at `timeMs`. */
export interface ContainerUsage {
  readonly name: string;
  /** The container instance (CPU time restarts from 0 with a new one). */
  readonly restartCount: number;
  readonly timeMs: number;
  /** CPU time used since the instance started, in nanoseconds. */
  readonly cpuUsageNanoSeconds: number;
  readonly memoryWorkingSetBytes: number;
}

/** The running containers of one pod. */
export interface PodUsage {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly containers: readonly ContainerUsage[];
}

/** The host's cumulative figures at `timeMs`. */
export interface HostUsage {
  readonly timeMs: number;
  readonly cpuUsageNanoSeconds: number;
  readonly memoryWorkingSetBytes: number;
}

/** CPU time and resident memory of one session (a container's process tree). */
export interface SessionUsage {
  readonly cpuUsageNanoSeconds: number;
  readonly memoryWorkingSetBytes: number;
}

const sysconf = (name: string, fallback: number): number => {
  try {
    const value = Number(execFileSync('getconf', [name], { encoding: 'utf8' }).trim());
    return Number.isInteger(value) && value > 0 ? value : fallback;
  } catch {
    return fallback;
  }
};

let units: { readonly nanosPerTick: number; readonly pageBytes: number } | undefined;
/** `CLK_TCK` and the page size, asked once (Linux: 100 and 4096 almost everywhere). */
const procUnits = () => (units ??= { nanosPerTick: 1e9 / sysconf('CLK_TCK', 100), pageBytes: sysconf('PAGESIZE', 4096) });

/** Fields of `/proc/<pid>/stat` after the command name (field 3, `state`, is index 0). */
const statFields = (stat: string): string[] => stat.slice(stat.lastIndexOf(')') + 2).split(' ');

/**
 * One pass over `/proc`: the usage of every session, keyed by its session id (the pid of a
 * container process the runtime spawned). Processes that vanish mid-scan are skipped.
 */
export function scanSessions(): Map<number, SessionUsage> {
  const { nanosPerTick, pageBytes } = procUnits();
  const sessions = new Map<number, { cpuTicks: number; rssPages: number }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    const fields = statFields(stat);
    // state(0) ppid(1) pgrp(2) session(3) … utime(11) stime(12) cutime(13) cstime(14) … rss(21)
    const session = Number(fields[3]);
    const cpuTicks = Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
    const rssPages = Number(fields[21]);
    if (!Number.isFinite(session) || !Number.isFinite(cpuTicks) || !Number.isFinite(rssPages)) continue;
    const sum = sessions.get(session) ?? { cpuTicks: 0, rssPages: 0 };
    sum.cpuTicks += cpuTicks;
    sum.rssPages += Math.max(0, rssPages);
    sessions.set(session, sum);
  }
  const usage = new Map<number, SessionUsage>();
  for (const [session, sum] of sessions) {
    usage.set(session, { cpuUsageNanoSeconds: sum.cpuTicks * nanosPerTick, memoryWorkingSetBytes: sum.rssPages * pageBytes });
  }
  return usage;
}

/** Parses `/proc/meminfo` into kB values by name. */
const meminfo = (text: string): Map<string, number> => {
  const values = new Map<string, number>();
  for (const line of text.split('\n')) {
    const match = /^([^:]+):\s+(\d+)/.exec(line);
    if (match) values.set(match[1]!, Number(match[2]) * 1024);
  }
  return values;
};

/** The host's CPU time (every non-idle jiffy of every CPU) and memory working set, at `timeMs`. */
export function hostUsage(timeMs: number): HostUsage {
  const { nanosPerTick } = procUnits();
  const cpuLine = readFileSync('/proc/stat', 'utf8').split('\n').find((line) => line.startsWith('cpu ')) ?? '';
  // user nice system idle iowait irq softirq steal (guest time is counted in user already)
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = cpuLine.trim().split(/\s+/).slice(1).map(Number);
  const memory = meminfo(readFileSync('/proc/meminfo', 'utf8'));
  const total = memory.get('MemTotal') ?? 0;
  const free = memory.get('MemFree') ?? 0;
  const inactiveFile = memory.get('Inactive(file)') ?? 0;
  return {
    timeMs,
    cpuUsageNanoSeconds: (user + nice + system + irq + softirq + steal) * nanosPerTick,
    memoryWorkingSetBytes: Math.max(0, total - free - inactiveFile),
  };
}
