/**
 * The orphan reaper as a POSIX shell script, what orphan-reaper.ts starts
 * (`/bin/sh -c REAPER_SCRIPT runner-reaper`): the contract of reaper-main.ts,
 * which runs instead where there is no /bin/sh. The Node program costs about
 * 70 ms of CPU to start, this script about 2 ms, and every runner that starts
 * an app starts a reaper.
 *
 * stdin carries `track <pid> <start>` and `untrack <pid>` lines; at EOF (the
 * runner is gone, whatever the signal) every group still tracked gets
 * SIGTERM, the strays that left it (found through /proc before any signal)
 * too, then SIGKILL after about a second, and the reaper exits. A group is
 * signalled only while its leader has the start time the runner recorded,
 * or, its leader gone, while it still has members; without /proc (macOS),
 * whenever a group with that id exists. Pathname expansion is off
 * (`set -f`): no line from stdin is ever expanded as a pattern.
 */
export const REAPER_SCRIPT = `set -f
groups=''
while IFS=' ' read -r verb pid start rest; do
  case $pid in ''|*[!0-9]*) continue ;; esac
  [ "$pid" -gt 1 ] || continue
  kept=''
  for entry in $groups; do [ "\${entry%%:*}" = "$pid" ] || kept="$kept $entry"; done
  groups=$kept
  if [ "$verb" = track ]; then
    case \${start:--} in *:*) continue ;; esac
    groups="$groups $pid:\${start:--}"
  fi
done

have_proc=false
[ -r /proc/self/stat ] && have_proc=true
have_awk=false
command -v awk >/dev/null 2>&1 && command -v cat >/dev/null 2>&1 && have_awk=true

# Sets st_state, st_ppid, st_pgrp and st_start from /proc/PID/stat, counting the
# fields from the last ') ' (the command name may hold spaces and parentheses).
stat_of() {
  line=''
  { read -r line < "/proc/$1/stat"; } 2>/dev/null
  [ -n "$line" ] || return 1
  set -- \${line##*") "}
  [ $# -ge 20 ] || return 1
  st_state=$1 st_ppid=$2 st_pgrp=$3
  shift 19
  st_start=$1
}

# procs: every process as pid:ppid:pgrp:state. With awk, one cat and one awk read
# them all; the shell's own read takes a byte at a time (about 0.5 ms a process).
list_procs() {
  procs=''
  $have_proc || return 0
  set +f
  if $have_awk; then
    procs=$(cat /proc/[0-9]*/stat 2>/dev/null | awk '{ if (match($0, /\\) [^)]*$/)) { split(substr($0, RSTART + 2), f, " "); printf "%s:%s:%s:%s ", $1, f[2], f[3], f[1] } }')
    set -f
    return 0
  fi
  set -- /proc/[0-9]*/stat
  set -f
  for file do
    p=\${file#/proc/}
    p=\${p%/stat}
    stat_of "$p" && procs="$procs $p:$st_ppid:$st_pgrp:$st_state"
  done
}

# found: the descendants of $1, children before grandchildren. A tree has no more
# of them than there are processes: a list read while pids were reused may not be one.
descendants() {
  set -- "$1" $procs
  found='' queue=$1 steps=0 most=$#
  while [ -n "$queue" ]; do
    set -- $queue
    next=$1
    shift
    queue=$*
    for rec in $procs; do
      rest=\${rec#*:}
      [ "\${rest%%:*}" = "$next" ] || continue
      found="$found \${rec%%:*}"
      queue="$queue \${rec%%:*}"
    done
    steps=$((steps + 1))
    [ $steps -le "$most" ] || break
  done
}

is_runner_app() {
  if stat_of "$1"; then [ "$st_start" = "$2" ]; return; fi
  kill -s 0 -- "-$1" 2>/dev/null
}

is_alive() {
  if stat_of "$1"; then [ "$st_state" != Z ]; return; fi
  ! $have_proc && kill -s 0 -- "$1" 2>/dev/null
}

group_live() {
  $have_proc || { kill -s 0 -- "-$1" 2>/dev/null; return; }
  for rec in $procs; do
    rest=\${rec#*:*:}
    [ "\${rest%%:*}" = "$1" ] && [ "\${rest#*:}" != Z ] && return 0
  done
  return 1
}

signal_apps() {
  for entry in $leaders; do
    is_runner_app "\${entry%%:*}" "\${entry#*:}" && kill -s "$1" -- "-\${entry%%:*}" 2>/dev/null
  done
  for entry in $strays; do
    stat_of "\${entry%%:*}" && [ "$st_start" = "\${entry#*:}" ] && kill -s "$1" -- "\${entry%%:*}" 2>/dev/null
  done
  return 0
}

any_left() {
  list_procs
  for entry in $leaders; do group_live "\${entry%%:*}" && return 0; done
  for entry in $strays; do is_alive "\${entry%%:*}" && return 0; done
  return 1
}

# A runner that exits normally has untracked every app: nothing to look at.
[ -n "$groups" ] || exit 0
leaders='' strays=''
list_procs
for entry in $groups; do
  is_runner_app "\${entry%%:*}" "\${entry#*:}" || continue
  leaders="$leaders $entry"
  descendants "\${entry%%:*}"
  for pid in $found; do stat_of "$pid" && strays="$strays $pid:$st_start"; done
done
[ -n "$leaders" ] || exit 0
signal_apps TERM
# At least a second of grace (twenty sleeps of 50 ms), a little more as each poll also reads /proc.
polls=0
while [ $polls -lt 20 ] && any_left; do
  sleep 0.05 2>/dev/null || sleep 1
  polls=$((polls + 1))
done
signal_apps KILL
exit 0
`;
