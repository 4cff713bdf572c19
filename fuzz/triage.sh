#!/usr/bin/env bash
# Groups a target's crash files by cause: the error (exception text or sanitizer report) and the first
# project frame of the stack. Prints one line per distinct crash with a sample input and the count.
#   fuzz/triage.sh TARGET [BUILD_DIR]        e.g. fuzz/triage.sh headers_command
set -uo pipefail
cd "$(dirname "$0")/.."
t="$1"
build="${2:-build-fuzz}"
root="$(pwd)"
for f in "$build/crashes/$t"/*; do
  [ -f "$f" ] || continue
  out=$(timeout 60 "$build/fuzz/fuzz_$t" -runs=1 "$f" 2>&1)
  err=$(printf '%s\n' "$out" | grep -m1 -E 'what\(\)|runtime error:|ERROR: AddressSanitizer|ERROR: LeakSanitizer|Timeout|out-of-memory' |
        sed -E 's/^[^ ]*: //; s/0x[0-9a-fA-F]+/0x../g; s/index [0-9]+/index N/; s/[0-9]{3,}/N/g' | cut -c1-110)
  frame=$(printf '%s\n' "$out" | grep -E "in tg::|in \(anonymous namespace\)|$root/core" | grep -v '/fuzz/' | head -1 |
          sed -E 's/.* in (.*) \/.*\/(core\/[^ ]*)$/\1 \2/; s/\(.*\) / /' | cut -c1-140)
  echo "${err:-?} @ ${frame:-?}|$f"
done | sort | awk -F'|' '{n[$1]++; if (!($1 in s)) s[$1]=$2} END {for (k in n) printf "%4d  %s\n      e.g. %s\n", n[k], k, s[k]}'
