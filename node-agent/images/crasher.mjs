// logplane/crasher: exits with a given code after a given time.
//
// Exit code: --exit-code N (or --exit-code=N), else env EXIT_CODE, default 1.
// Delay:     --after-ms M  (or --after-ms=M),  else env EXIT_AFTER_MS, default 0.
const argValue = (flag) => {
  const args = process.argv.slice(2);
  for (let i = 0; i < args.length; i++) {
    if (args[i] === flag) return args[i + 1];
    if (args[i].startsWith(`${flag}=`)) return args[i].slice(flag.length + 1);
  }
  return undefined;
};

const code = Number(argValue('--exit-code') ?? process.env.EXIT_CODE ?? 1);
const afterMs = Number(argValue('--after-ms') ?? process.env.EXIT_AFTER_MS ?? 0);
if (!Number.isInteger(code) || code < 0 || code > 255 || !Number.isFinite(afterMs) || afterMs < 0) {
  console.error(`crasher: bad arguments (exit code ${code}, after ${afterMs} ms)`);
  process.exit(2);
}
console.log(`crasher: pod ${process.env.POD_NAME ?? 'unknown'} will exit with code ${code} after ${afterMs} ms`);
setTimeout(() => {
  console.log(`crasher: exiting with code ${code}`);
  process.exit(code);
}, afterMs);
