// Builds the dashboard into dashboard/dist with Vite (`npm run dashboard:build`; npm install
// runs it as `prepare`). The apiserver serves dist at /ui/. Without Vite (an install with
// --omit=dev) or without the sources (a Docker layer that has only package.json yet) it says
// so and builds nothing: the apiserver then answers /ui/ with 503 and how to build it.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('.', import.meta.url));
if (!existsSync(new URL('index.html', import.meta.url))) {
  console.warn('dashboard: no sources here, not built');
  process.exit(0);
}
let vite;
try {
  vite = await import('vite');
} catch {
  console.warn('dashboard: vite (a dev dependency) is not installed, not built; /ui/ answers 503 until `npm run dashboard:build`');
  process.exit(0);
}
await vite.build({
  root,
  base: '/ui/',
  configFile: false,
  logLevel: 'warn',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // The timeline library is most of the bundle; one file is fine for a page its own server serves.
    chunkSizeWarningLimit: 2048,
  },
});
console.log(`dashboard: built into ${root}dist`);
