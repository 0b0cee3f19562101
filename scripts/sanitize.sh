#!/usr/bin/env bash
# Runs the whole test suite under AddressSanitizer (with LeakSanitizer) and under
# ThreadSanitizer (docs/RELIABILITY.md).
#
#   scripts/sanitize.sh                     address, then thread
#   scripts/sanitize.sh thread              one of them
#   scripts/sanitize.sh address -- --filter FerryServerTests   extra `swift test` arguments
#
# Each sanitizer builds in its own scratch folder (.build/sanitize-KIND), so the
# normal debug build is not rebuilt. Every process the tests start (ferry, ferry
# card) inherits the sanitizer options, and every report goes to a file under
# .build/sanitize-KIND/reports/, so reports from child processes are counted too.
# Tests run one at a time, as in scripts/test.sh (timed tests would starve each
# other on two cores, the more so under a sanitizer's slowdown).
# Suppressions (each with its reason) are in scripts/sanitizers/. Exit status 1
# when any report was written or a test failed.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
kinds=()
extra=()
while (($#)); do
  case $1 in
    address | thread) kinds+=("$1"); shift ;;
    --) shift; extra=("$@"); break ;;
    -h | --help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "usage: scripts/sanitize.sh [address] [thread] [-- swift test args]" >&2; exit 2 ;;
  esac
done
((${#kinds[@]})) || kinds=(address thread)

scripts/setup.sh >/dev/null
status=0
for kind in "${kinds[@]}"; do
  scratch=$root/.build/sanitize-$kind
  reports=$scratch/reports
  rm -rf "$reports"
  mkdir -p "$reports"
  echo "sanitize: building the tests with --sanitize=$kind" >&2
  nice -n 15 swift build --build-tests --sanitize="$kind" --scratch-path "$scratch" 2>&1 | grep -Ev "ld.gold: warning" | tail -2
  log=$scratch/test.log
  start=$(date +%s)
  testStatus=0
  # Swift's own crash backtracer would race the sanitizer's report; let the sanitizer report.
  SWIFT_BACKTRACE=enable=no \
    ASAN_OPTIONS="log_path=$reports/asan:detect_leaks=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1" \
    LSAN_OPTIONS="suppressions=$root/scripts/sanitizers/lsan.supp:print_suppressions=0" \
    TSAN_OPTIONS="log_path=$reports/tsan:suppressions=$root/scripts/sanitizers/tsan.supp:halt_on_error=0:second_deadlock_stack=1" \
    nice -n 15 swift test --skip-build --no-parallel --sanitize="$kind" --scratch-path "$scratch" "${extra[@]}" >"$log" 2>&1 ||
    testStatus=$?
  elapsed=$(($(date +%s) - start))
  count=$(find "$reports" -type f | wc -l)
  summary=$(grep -E "^✔ Test run|^✘ Test run|Executed [0-9]+ tests" "$log" | tail -2 | tr '\n' ' ')
  echo "sanitize: $kind: swift test exit $testStatus in ${elapsed}s, $count report file(s) in $reports; $summary"
  if ((count > 0)); then
    grep -h -E "^(SUMMARY|WARNING: ThreadSanitizer|ERROR: (Address|Leak)Sanitizer)" "$reports"/* | sort | uniq -c | sort -rn | head -20
    status=1
  fi
  ((testStatus == 0)) || status=1
done
exit $status
