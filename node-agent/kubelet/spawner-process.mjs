// The container spawner's helper process (see spawner.ts). Plain JavaScript, started as
// `node spawner-process.mjs` with an IPC channel and no loader, so it stays small: forking
// from it costs a fraction of forking from the agent's process.
//
// Messages in: { id, file, args, cwd, env, logFile, mkdirs }.
// Messages out: { type: 'ready' } once it listens; { type: 'spawned', id, pid, procStart } once the child has exec'd;
// { type: 'failed', id, message } if it could not start; { type: 'error', id, message } for a
// later error of the child; { type: 'exit', id, code, signal } when it has exited (reaped
// here) and its process group has been SIGKILLed.
//
// When the agent goes away (the channel closes) it exits; the containers keep running (each
// leads its own session) and the next agent run adopts them from their records.
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';

if (process.send === undefined) throw new Error('spawner-process.mjs runs only as the agent\'s helper, with an IPC channel');
const send = (message) => {
  if (process.connected) process.send(message);
};
process.on('disconnect', () => process.exit(0));

/** `/proc/<pid>/stat` starttime, or -1 (as proc.ts readProcStart, which this file cannot import). */
function procStart(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const start = Number(fields[19]);
    return fields[0] === 'Z' || fields[0] === 'X' || !Number.isFinite(start) ? -1 : start;
  } catch {
    return -1;
  }
}

process.on('message', (request) => {
  const { id, file, args, cwd, env, logFile, mkdirs } = request;
  let logFd;
  let child;
  try {
    for (const dir of mkdirs) mkdirSync(dir, { recursive: true });
    logFd = openSync(logFile, 'a');
    child = spawn(file, args, { cwd, env, detached: true, stdio: ['ignore', logFd, logFd] });
  } catch (err) {
    send({ type: 'failed', id, message: err instanceof Error ? err.message : String(err) });
    return;
  } finally {
    if (logFd !== undefined) closeSync(logFd);
  }
  child.unref();
  const pid = child.pid;
  if (pid === undefined) {
    child.once('error', (err) => send({ type: 'failed', id, message: `exec ${file}: ${err.message}` }));
    return;
  }
  // spawn() returns a pid only once the child has exec'd (libuv waits for the exec on a
  // close-on-exec pipe), so it is reported at once: waiting for the 'spawn' event (a
  // nextTick) held every report of a batch of requests read together until the last fork.
  send({ type: 'spawned', id, pid, procStart: procStart(pid) });
  child.once('error', (err) => send({ type: 'error', id, message: err.message }));
  child.once('exit', (code, signal) => {
    // The leader is gone; anything left in its process group goes with it (as a container's
    // cgroup would). Just reaped: the group id cannot have been reused while members remain.
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // ESRCH: the group is empty.
    }
    send({ type: 'exit', id, code, signal });
  });
});

// Listening: the agent's spawner.warm() waits for this.
send({ type: 'ready' });
