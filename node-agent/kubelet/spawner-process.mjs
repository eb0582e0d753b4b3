// The container spawner's helper process (see spawner.ts). Plain JavaScript, started as
// `node spawner-process.mjs` with an IPC channel and no loader, so it stays small: forking
// from it costs a fraction of forking from the agent's process.
//
// Messages in: { id, file, args, cwd, env, logFile, mkdirs, user?: { uid, gid }, ownedDir?: { path, owner?: { uid, gid }, mode? } }.
// Messages out: { type: 'ready' } once it listens; { type: 'spawned', id, pid, procStart } once the child has exec'd;
// { type: 'failed', id, message } if it could not start; { type: 'error', id, message } for a
// later error of the child; { type: 'exit', id, code, signal } when it has exited (reaped
// here) and its process group has been SIGKILLed.
//
// When the agent goes away (the channel closes) it exits; the containers keep running (each
// leads its own session) and the next agent run adopts them from their records.
import { spawn } from 'node:child_process';
import { chmodSync, closeSync, constants, lchownSync, lstatSync, mkdirSync, openSync, readFileSync } from 'node:fs';

if (process.send === undefined) throw new Error('spawner-process.mjs runs only as the agent\'s helper, with an IPC channel');
/** Sends `message` to the agent; `done(false)` if it cannot arrive (the agent is gone). */
const send = (message, done = () => {}) => {
  if (!process.connected) {
    done(false);
    return;
  }
  // With a callback, a write to a closed channel (EPIPE) comes here instead of as an
  // 'error' event, which crashed the helper with a stack trace on the agent's stderr.
  process.send(message, (err) => done(err == null));
};

const killGroup = (pid) => {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // ESRCH: the group is empty.
  }
};

/**
 * Containers started whose start the agent has not been sent yet. If the agent is gone they
 * are killed: their records are written once the agent hears of them, so no agent run could
 * ever adopt or stop them.
 */
const unreported = new Set();
process.on('disconnect', () => {
  for (const pid of unreported) killGroup(pid);
  process.exit(0);
});

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
  const { id, file, args, cwd, env, logFile, mkdirs, user, ownedDir } = request;
  // Read after the agent went away: nobody would record the container (see `unreported`).
  if (!process.connected) return;
  let logFd;
  let child;
  try {
    for (const dir of mkdirs) mkdirSync(dir, { recursive: true });
    if (ownedDir !== undefined) {
      const mode = ownedDir.mode ?? 0o700;
      mkdirSync(ownedDir.path, { recursive: true, mode });
      // lchown: never through a symlink (the directory's parent is not the pod's to change, but still).
      if (ownedDir.owner !== undefined) {
        lchownSync(ownedDir.path, ownedDir.owner.uid, ownedDir.owner.gid);
        // After the chown (umask narrowed the mkdir; a setgid bit is set here, not inherited).
        if (!lstatSync(ownedDir.path).isSymbolicLink()) chmodSync(ownedDir.path, mode);
      }
    }
    // The log file is the agent's (the process writes to it through the descriptor only):
    // never followed through a symlink, never readable by others.
    logFd = openSync(logFile, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o640);
    // libuv changes to cwd, then drops supplementary groups, sets the gid, then the uid, then execs.
    const ids = user === undefined ? {} : { uid: user.uid, gid: user.gid };
    child = spawn(file, args, { cwd, env, detached: true, stdio: ['ignore', logFd, logFd], ...ids });
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
  unreported.add(pid);
  send({ type: 'spawned', id, pid, procStart: procStart(pid) }, (delivered) => {
    unreported.delete(pid);
    if (!delivered) killGroup(pid);
  });
  child.once('error', (err) => send({ type: 'error', id, message: err.message }));
  child.once('exit', (code, signal) => {
    // The leader is gone; anything left in its process group goes with it (as a container's
    // cgroup would). Just reaped: the group id cannot have been reused while members remain.
    killGroup(pid);
    send({ type: 'exit', id, code, signal });
  });
});

// Listening: the agent's spawner.warm() waits for this.
send({ type: 'ready' });
