/**
 * The top functions of a V8 CPU profile (`node --cpu-prof`), by self time and by total
 * (inclusive) time, so a benchmark miss can be traced to its cause.
 *
 *   npx tsx bench/profile-top.ts <file.cpuprofile> [--top 25] [--filter substring]
 *
 * Run a scenario under the profiler first, e.g.
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx bench/main.ts --only schedule --log embedded
 *
 * A sampling heap profile (`.heapprofile`, e.g. from `BENCH_ALLOC_PROFILE=<file>` of the
 * schedule scenario) is summed the same way, in bytes allocated per function instead of time.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { transformSync } from 'esbuild';

interface CallFrame {
  readonly functionName: string;
  readonly url: string;
  readonly lineNumber: number;
  readonly columnNumber: number;
}

interface ProfileNode {
  readonly id: number;
  readonly callFrame: CallFrame;
  readonly children?: readonly number[];
}

interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
  readonly startTime: number;
  readonly endTime: number;
}

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** Decodes the first generated line of a source map: [generated column, original line] pairs. */
const decodeFirstLine = (mappings: string): [number, number][] => {
  const segments: [number, number][] = [];
  let column = 0;
  let sourceLine = 0;
  for (const segment of (mappings.split(';')[0] ?? '').split(',')) {
    const values: number[] = [];
    let value = 0;
    let shift = 0;
    for (const char of segment) {
      const digit = BASE64.indexOf(char);
      value += (digit & 31) << shift;
      if (digit & 32) shift += 5;
      else {
        values.push(value & 1 ? -(value >> 1) : value >> 1);
        value = 0;
        shift = 0;
      }
    }
    column += values[0] ?? 0;
    if (values.length >= 3) sourceLine += values[2] ?? 0;
    segments.push([column, sourceLine]);
  }
  return segments;
};

/**
 * tsx compiles TypeScript with esbuild's minifyWhitespace, so every function of a file sits
 * on generated line 1 and the profile's line numbers say nothing. Compiling the file again
 * with tsx's options gives the same code and a source map from columns back to lines.
 */
const lineMaps = new Map<string, [number, number][] | undefined>();
const originalLine = (path: string, column: number): number | undefined => {
  if (!lineMaps.has(path)) {
    let segments: [number, number][] | undefined;
    if (/\.[cm]?ts$/.test(path) && existsSync(path)) {
      const result = transformSync(readFileSync(path, 'utf8'), {
        target: `node${process.versions.node}`,
        loader: 'ts',
        sourcemap: true,
        minifyWhitespace: true,
        keepNames: true,
        format: 'esm',
        sourcefile: path,
      });
      segments = decodeFirstLine((JSON.parse(result.map) as { mappings: string }).mappings);
    }
    lineMaps.set(path, segments);
  }
  const segments = lineMaps.get(path);
  if (!segments) return undefined;
  let found: number | undefined;
  for (const [generated, line] of segments) {
    if (generated > column) break;
    found = line + 1;
  }
  return found;
};

/** A function's place in the source: "name (path:line)", with the repository prefix removed. */
const label = (frame: CallFrame): string => {
  const path = frame.url.startsWith('file://') ? fileURLToPath(frame.url) : frame.url;
  const line = frame.lineNumber === 0 ? (originalLine(path, frame.columnNumber) ?? 1) : frame.lineNumber + 1;
  const shown = path.replace(/^.*\/work\/main\//, '');
  return `${frame.functionName || '(anonymous)'} ${shown ? `(${shown}:${line})` : ''}`.trim();
};

/** Self and total milliseconds per function label. */
export const summarize = (profile: CpuProfile): { self: Map<string, number>; total: Map<string, number>; totalMs: number } => {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const selfById = new Map<number, number>();
  profile.samples.forEach((id, i) => selfById.set(id, (selfById.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000));
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  for (const [id, ms] of selfById) {
    const node = byId.get(id)!;
    const name = label(node.callFrame);
    self.set(name, (self.get(name) ?? 0) + ms);
    // Inclusive time: every distinct function on the stack gets the sample once.
    const seen = new Set<string>();
    for (let cursor: number | undefined = id; cursor !== undefined; cursor = parent.get(cursor)) {
      const frame = label(byId.get(cursor)!.callFrame);
      if (seen.has(frame)) continue;
      seen.add(frame);
      total.set(frame, (total.get(frame) ?? 0) + ms);
    }
  }
  return { self, total, totalMs: (profile.endTime - profile.startTime) / 1000 };
};

interface HeapProfileNode {
  readonly id: number;
  readonly callFrame: CallFrame;
  readonly selfSize: number;
  readonly children: readonly HeapProfileNode[];
}

/** A sampling heap profile (`HeapProfiler.stopSampling`, `--heap-prof`). */
interface HeapProfile {
  readonly head: HeapProfileNode;
}

/** Self and total bytes per function label of a sampling heap profile. */
export const summarizeHeap = (profile: HeapProfile): { self: Map<string, number>; total: Map<string, number>; totalBytes: number } => {
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  let totalBytes = 0;
  const visit = (node: HeapProfileNode, stack: readonly string[]): void => {
    const name = label(node.callFrame);
    const here = stack.includes(name) ? stack : [...stack, name];
    if (node.selfSize > 0) {
      totalBytes += node.selfSize;
      self.set(name, (self.get(name) ?? 0) + node.selfSize);
      for (const frame of here) total.set(frame, (total.get(frame) ?? 0) + node.selfSize);
    }
    for (const child of node.children) visit(child, here);
  };
  visit(profile.head, []);
  return { self, total, totalBytes };
};

const main = (): void => {
  // Piped into `head`: stop quietly when the reader goes away.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0);
    throw error;
  });
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { top: { type: 'string', default: '25' }, filter: { type: 'string' } },
  });
  const file = positionals[0];
  if (!file) throw new Error('usage: profile-top.ts <file.cpuprofile> [--top N] [--filter substring]');
  const top = Number(values.top);
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile | HeapProfile;
  const show = (title: string, entries: Map<string, number>, of: number, format: (value: number) => string): void => {
    console.log(`\n${title}`);
    const rows = [...entries.entries()]
      .filter(([name]) => !values.filter || name.includes(values.filter))
      .sort((a, b) => b[1] - a[1])
      .slice(0, top);
    for (const [name, value] of rows) console.log(`${format(value)} ${((value / of) * 100).toFixed(1).padStart(5)}%  ${name}`);
  };
  if ('head' in parsed) {
    const { self, total, totalBytes } = summarizeHeap(parsed);
    const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(1).padStart(7)} MiB`;
    show(`self bytes (of ${mib(totalBytes).trim()} sampled)`, self, totalBytes, mib);
    show('total bytes', total, totalBytes, mib);
    return;
  }
  const { self, total, totalMs } = summarize(parsed);
  const seconds = (ms: number): string => `${(ms / 1000).toFixed(2).padStart(8)} s`;
  show(`self time (of ${(totalMs / 1000).toFixed(1)} s profiled)`, self, totalMs, seconds);
  show(`total time (of ${(totalMs / 1000).toFixed(1)} s profiled)`, total, totalMs, seconds);
};

main();
