# logplane/sleeper: sleeps until signalled. A POSIX sh script (run as `/bin/sh sleeper.sh`):
# it starts in about a millisecond where a Node program takes ~40 ms of CPU, and it waits
# without any child process (a `read` on a FIFO it holds open at both ends never returns).
#
# On SIGTERM it appends "SIGTERM <pid> <ISO time>" to the file named by SIGNAL_LOG (if set),
# then exits 0, unless IGNORE_SIGTERM=1, in which case it keeps sleeping (only SIGKILL ends it).
# Once its handler is installed it creates the file named by READY_FILE (if set), so a
# readiness probe (`test -f $READY_FILE`) tells when signalling it is meaningful.

on_term() {
  if [ -n "${SIGNAL_LOG:-}" ]; then
    echo "SIGTERM $$ $(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)" >>"$SIGNAL_LOG"
  fi
  echo 'sleeper: SIGTERM received'
  if [ "${IGNORE_SIGTERM:-}" != 1 ]; then exit 0; fi
}
# A SIGTERM during the setup below is handled once the FIFO is gone (not left behind).
termed=''
trap 'termed=1' TERM

if [ "${IGNORE_SIGTERM:-}" = 1 ]; then ignoring=' (ignoring SIGTERM)'; else ignoring=''; fi
echo "sleeper: pod ${POD_NAME:-unknown} pid $$ sleeping$ignoring"

# It waits on a FIFO that every sleeper of this user shares (the first one creates it and it
# stays): opening it costs no process, where a FIFO of its own cost two more (mkfifo, rm),
# ~2 ms of CPU per pod, which a burst of pods pays on every core. Nobody writes to it (a
# line written to it wakes one sleeper, which waits again); each sleeper holds it open for
# reading and writing, so its read never sees end of file. Its name carries the uid (read
# from /proc with builtins, no process): pods run as another user than the agent, and a
# FIFO of one user is no use to another's sleepers.
uid=''
while read -r key value _; do
  if [ "$key" = 'Uid:' ]; then uid=$value; break; fi
done </proc/self/status
shared="${TMPDIR:-/tmp}/logplane-sleeper-${uid:-unknown}.fifo"
if [ ! -e "$shared" ]; then mkfifo -m 600 "$shared" 2>/dev/null; fi
if [ -p "$shared" ] && [ -O "$shared" ] && [ -r "$shared" ] && [ -w "$shared" ]; then
  exec 3<>"$shared"
else
  # Not usable (not a FIFO, another user's): a FIFO of its own, unlinked at once, so only
  # this shell's descriptor 3 holds it. (A stale FIFO of a recycled pid is removed only if
  # mkfifo fails.)
  fifo="${TMPDIR:-/tmp}/logplane-sleeper.$$"
  mkfifo -m 600 "$fifo" 2>/dev/null || { rm -f "$fifo" && mkfifo -m 600 "$fifo"; } || exit 1
  exec 3<>"$fifo"
  rm -f "$fifo"
fi

trap on_term TERM
if [ -n "$termed" ]; then on_term; fi

if [ -n "${READY_FILE:-}" ]; then echo $$ >"$READY_FILE"; fi

# A trapped signal interrupts the read; the handler runs and, unless it exits, the loop waits again.
while :; do
  read -r _ <&3
done
