#!/usr/bin/env bash
# Fuzzes Ferry's parsers with libFuzzer, one target at a time (docs/RELIABILITY.md).
#
#   scripts/fuzz.sh                       every target, 600 s each
#   scripts/fuzz.sh -t 60 FTPList RemoteURL
#   scripts/fuzz.sh --list                the target names
#   scripts/fuzz.sh --update-corpus [TARGET...]
#                                         folds what the last runs found into
#                                         Fuzz/corpus/<TARGET> (a set-cover merge,
#                                         at most $FUZZ_CORPUS_CAP files, seeds kept)
#   scripts/fuzz.sh --coverage [TARGET...] executed-edge count of the checked-in corpus
#
# The targets live in the separate package Fuzz/ (its library targets are links to
# ../Sources), so `swift build` of Ferry never compiles them. Runs are niced and
# serialized by a lock: a second fuzz.sh waits for the first to finish.
# Work files go to .build/fuzz/: the growing corpus, crash/timeout/leak artifacts,
# logs and summary.txt (one line per run). Exit status 1 when any run found something.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=$root/.build/fuzz
seconds=${FUZZ_TIME:-600}
cap=${FUZZ_CORPUS_CAP:-40}
mode=run
targets=()
while (($#)); do
  case $1 in
    -t | --time) seconds=$2; shift 2 ;;
    --list) mode=list; shift ;;
    --update-corpus) mode=update; shift ;;
    --coverage) mode=coverage; shift ;;
    -h | --help) sed -n '2,19p' "$0"; exit 0 ;;
    *) targets+=("$1"); shift ;;
  esac
done

all=$(sed -n 's/^    ("\([A-Za-z]*\)", \[.*/\1/p' Fuzz/Package.swift)
if [[ $mode == list ]]; then echo "$all"; exit 0; fi
((${#targets[@]})) || mapfile -t targets <<<"$all"

mkdir -p "$work/logs"
exec 9>"$work/lock"
if ! flock -n 9; then
  echo "fuzz: another fuzz.sh is running; waiting for it" >&2
  flock 9
fi

echo "fuzz: building Fuzz/ with -sanitize=fuzzer,address" >&2
(cd Fuzz && nice -n 15 swift build --sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address 2>&1 | grep -v "ld.gold: warning" | tail -3)
bin=$root/Fuzz/.build/debug

found=0
for t in "${targets[@]}"; do
  exe=$bin/fuzz-$t
  [[ -x $exe ]] || { echo "fuzz: no target $t (see --list)" >&2; exit 2; }
  seeds=$root/Fuzz/corpus/$t
  mkdir -p "$seeds" "$work/corpus/$t" "$work/artifacts/$t"
  dict=()
  [[ -f Fuzz/dict/$t.dict ]] && dict=(-dict="$root/Fuzz/dict/$t.dict")
  case $mode in
    run)
      log=$work/logs/$t.log
      echo "fuzz: $t for ${seconds}s (log $log)" >&2
      start=$(date +%s)
      marker=$work/artifacts/.started-$t
      touch "$marker"
      status=0
      # Memory leaks are reported by LeakSanitizer at exit of each run (-detect_leaks=1).
      # Swift's own crash backtracer reads memory ASan watches; libFuzzer reports instead.
      LSAN_OPTIONS="suppressions=$root/scripts/sanitizers/lsan.supp:print_suppressions=0" \
        SWIFT_BACKTRACE=enable=no nice -n 15 "$exe" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -detect_leaks=1 \
        -print_final_stats=1 -artifact_prefix="$work/artifacts/$t/" "${dict[@]}" \
        "$work/corpus/$t" "$seeds" >"$log" 2>&1 9>&- || status=$?
      elapsed=$(($(date +%s) - start))
      runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
      speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
      rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -1)
      last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
      cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
      ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
      corp=$(sed -n 's/.* corp: \([0-9]*\/[0-9a-zA-Z]*\).*/\1/p' <<<"$last")
      # Only this run's finds: earlier ones stay in the folder until moved to the corpus.
      artifacts=$(find "$work/artifacts/$t" -type f -newer "$marker" | wc -l)
      verdict=ok
      if ((status != 0 || artifacts > 0)); then verdict="FOUND (exit $status, $artifacts artifacts)"; found=1; fi
      line="$(date -u +%FT%TZ) $t seconds=$elapsed runs=${runs:-?} exec/s=${speed:-?} cov=${cov:-?} ft=${ft:-?} corpus=${corp:-?} rss_mb=${rss:-?} $verdict"
      echo "$line" | tee -a "$work/summary.txt"
      ;;
    update)
      merged=$(mktemp -d)
      SWIFT_BACKTRACE=enable=no nice -n 15 "$exe" -set_cover_merge=1 "${dict[@]}" "$merged" "$seeds" "$work/corpus/$t" \
        >"$work/logs/$t.merge.log" 2>&1
      # Seeds stay under their names; fuzzer finds are named by content hash.
      declare -A seedHash=()
      for f in "$seeds"/seed-* "$seeds"/crash-*; do
        [[ -f $f ]] && seedHash[$(sha1sum <"$f" | cut -c1-40)]=1
      done
      find "$seeds" -maxdepth 1 -type f ! -name 'seed-*' ! -name 'crash-*' -delete
      kept=0
      # Smallest first: each kept file is a distinct behaviour, and replay stays fast.
      while IFS= read -r f; do
        h=$(basename "$f")
        [[ -n ${seedHash[$h]:-} ]] && continue
        ((kept < cap)) || break
        cp "$f" "$seeds/found-$h"
        kept=$((kept + 1))
      done < <(find "$merged" -type f -printf '%s %p\n' | sort -n | cut -d' ' -f2-)
      unset seedHash
      rm -rf "$merged"
      echo "fuzz: $t corpus now $(find "$seeds" -type f | wc -l) files" >&2
      ;;
    coverage)
      out=$(SWIFT_BACKTRACE=enable=no nice -n 15 "$exe" -runs=0 "$seeds" 2>&1 | grep -E 'INITED|DONE' | tail -1)
      echo "$t $(find "$seeds" -type f | wc -l) files: $out"
      ;;
  esac
done
exit $found
