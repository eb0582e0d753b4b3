#!/usr/bin/env node
// The logplane command: runs the TypeScript sources through tsx's loader (no build step).
import { tsImport } from 'tsx/esm/api';

const { main } = await tsImport('../cli/main.ts', import.meta.url);
await main(process.argv);
