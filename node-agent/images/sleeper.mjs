// logplane/sleeper: sleeps until signalled.
//
// On SIGTERM it appends "SIGTERM <pid> <ISO time>" to the file named by SIGNAL_LOG (if set),
// then exits 0, unless IGNORE_SIGTERM=1, in which case it keeps sleeping (only SIGKILL ends it).
// Once its handler is installed it creates the file named by READY_FILE (if set), so a
// readiness probe (`test -f $READY_FILE`) tells when signalling it is meaningful.
import { appendFileSync, writeFileSync } from 'node:fs';

const signalLog = process.env.SIGNAL_LOG;
const ignoreSigterm = process.env.IGNORE_SIGTERM === '1';

const keepAlive = setInterval(() => {}, 1 << 30);
console.log(`sleeper: pod ${process.env.POD_NAME ?? 'unknown'} pid ${process.pid} sleeping${ignoreSigterm ? ' (ignoring SIGTERM)' : ''}`);

process.on('SIGTERM', () => {
  if (signalLog !== undefined && signalLog !== '') appendFileSync(signalLog, `SIGTERM ${process.pid} ${new Date().toISOString()}\n`);
  console.log('sleeper: SIGTERM received');
  if (ignoreSigterm) return;
  clearInterval(keepAlive);
  process.exit(0);
});

if (process.env.READY_FILE !== undefined && process.env.READY_FILE !== '') writeFileSync(process.env.READY_FILE, `${process.pid}\n`);
