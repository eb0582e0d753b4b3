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

# The FIFO is unlinked at once: only this shell's descriptor 3 holds it, as reader and writer.
# (Two commands, not three: a stale FIFO of a recycled pid is removed only if mkfifo fails.)
fifo="${TMPDIR:-/tmp}/logplane-sleeper.$$"
mkfifo -m 600 "$fifo" 2>/dev/null || { rm -f "$fifo" && mkfifo -m 600 "$fifo"; } || exit 1
exec 3<>"$fifo"
rm -f "$fifo"

trap on_term TERM
if [ -n "$termed" ]; then on_term; fi

if [ -n "${READY_FILE:-}" ]; then echo $$ >"$READY_FILE"; fi

# A trapped signal interrupts the read; the handler runs and, unless it exits, the loop waits again.
while :; do
  read -r _ <&3
done
