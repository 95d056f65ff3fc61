#!/usr/bin/env bash
# parent_killed_test.sh AUDIT PLUGIN: an auditor killed from outside (SIGTERM, as `timeout` sends) takes the child
# running its class along (audit_isolation.h, die_with_parent). PLUGIN hangs in the rejection class. The control:
# the scan must first see that child alive, so that it could see one left behind.
set -u
audit=$1 plugin=$2
marker="fuseproof_parent_killed_$$_$RANDOM"
marked() {  # pids whose environment holds the marker, other than this script's
  local p
  for p in /proc/[0-9]*; do
    [ "${p#/proc/}" = "$$" ] && continue
    (tr "\\0" "\\n" < "$p/environ") 2>/dev/null | grep -qx "FUSEPROOF_TEST_MARKER=$marker" && echo "${p#/proc/}"
  done
}
env FUSEPROOF_TEST_MARKER="$marker" "$audit" audit --plugin "$plugin" --backend emulated --dtype bf16 \
  --only rejection --call-timeout 600 --no-reference > /dev/null 2>&1 &
parent=$!
child=""
for _ in $(seq 1 200); do
  child=$(marked | grep -vx "$parent" | head -1)
  [ -n "$child" ] && break
  sleep 0.1
done
if [ -z "$child" ]; then
  echo "FAIL: no class child of the auditor appeared within 20 s (the control)"
  kill -KILL "$parent" 2>/dev/null
  exit 1
fi
echo "class child $child of auditor $parent is running; SIGTERM to the auditor"
kill -TERM "$parent"
wait "$parent" 2>/dev/null
for _ in $(seq 1 50); do
  left=$(marked)
  [ -z "$left" ] && { echo "PASS: the class child ended with its auditor"; exit 0; }
  sleep 0.1
done
echo "FAIL: processes left running after the auditor was killed: $left"
kill -KILL $left 2>/dev/null
exit 1
