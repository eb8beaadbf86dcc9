#!/usr/bin/env bash
# Back-to-back comparison of two flowboost binaries on the Hoeffding-tree hot path:
# a9a, Oza over 100 Hoeffding trees with MOA's default parameters (as scripts/compare).
#
#   scripts/tree_bench.sh OLD_BIN NEW_BIN [REPS] [DATA_DIR]
#
# 1. Timing: REPS (default 3) interleaved runs of each binary pinned to CPU 1 (taskset),
#    user CPU seconds per run and the minimum per binary (the least disturbed run; on a
#    shared machine compare these ratios, not absolute figures). The predictions of the
#    last runs are compared byte for byte.
# 2. With valgrind installed: cachegrind (instructions, D1 and 1 MiB last-level misses) on
#    a prefix (6,000 training and 2,000 test examples): deterministic, unlike the timings.
set -euo pipefail
old=$1 new=$2 reps=${3:-3} data=${4:-../shared/data}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
args=(eval --algo oza --weak vfdt --learners 100 --tree-params default --seed 1
      --protocol holdout --json)
for i in $(seq "$reps"); do
  for tag in old new; do
    bin=$old; [ "$tag" = new ] && bin=$new
    /usr/bin/time -f "$tag %U %e %M" -o "$tmp/time" taskset -c 1 "$bin" "${args[@]}" \
      --data "$data/a9a/a9a" --test "$data/a9a/a9a.t" --predictions "$tmp/$tag.pred" \
      > "$tmp/$tag.json"
    read -r _ user wall kb < "$tmp/time"
    acc=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['accuracy'])" "$tmp/$tag.json")
    echo "$tag run $i: user ${user} s, wall ${wall} s, peak ${kb} KB, accuracy $acc"
    echo "$tag $user" >> "$tmp/users"
  done
done
sort -k1,1 -k2n "$tmp/users" | awk '!($1 in m){m[$1]=$2} END{printf "min user CPU s: old %s, new %s, ratio %.3f\n", m["old"], m["new"], m["old"]/m["new"]}'
if cmp -s "$tmp/old.pred" "$tmp/new.pred"; then echo "predictions: identical"; else echo "predictions: DIFFER"; fi
if command -v valgrind > /dev/null; then
  head -6000 "$data/a9a/a9a" > "$tmp/train"
  head -2000 "$data/a9a/a9a.t" > "$tmp/test"
  for tag in old new; do
    bin=$old; [ "$tag" = new ] && bin=$new
    valgrind --tool=cachegrind --cache-sim=yes --LL=1048576,8,64 \
      --cachegrind-out-file=/dev/null "$bin" "${args[@]}" --data "$tmp/train" \
      --test "$tmp/test" 2>&1 >/dev/null | grep -E "I +refs|D1 +misses|LL misses" | sed "s/^==[0-9]*==/$tag/"
  done
fi
