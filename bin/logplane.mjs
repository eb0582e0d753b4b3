#!/usr/bin/env node
// The logplane command: runs the TypeScript sources through tsx's loader (no build step).
import { setFlagsFromString } from 'node:v8';
import { tsImport } from 'tsx/esm/api';

// Between full GCs V8 lets the old generation grow up to 4x its live size on a machine that
// gives the heap 2 GB or more; a control plane that takes a burst of 10,000 pods then holds
// ~106 MiB live in ~225 MiB committed. Capped at 2.25x: 10,000 pods on 1,000 sim nodes take
// 373-392 MB RSS instead of 404-447 MB at the same pods/s (bench/FINDINGS.md, memory; 2x cost
// Kafka throughput, 2.5x left Kafka at 399-412 MB). bench/main.ts sets the same.
setFlagsFromString('--heap-growing-percent=125');

const { main } = await tsImport('../cli/main.ts', import.meta.url);
await main(process.argv);
