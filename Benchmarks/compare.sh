#!/usr/bin/env bash
# Compares this checkout's benchmarks with another commit's, in one run: both builds of
# ripple-bench alternate, workload by workload, for ROUNDS rounds.
# Usage: Benchmarks/compare.sh BASE-COMMIT [ROUNDS] [FILTER...]
#   Benchmarks/compare.sh 8b8e83d 3 fanout cold-pipeline
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:?usage: Benchmarks/compare.sh BASE-COMMIT [ROUNDS] [FILTER...]}
rounds=${2:-3}
shift $(( $# >= 2 ? 2 : 1 ))
filters=("$@")
[ ${#filters[@]} -gt 0 ] || filters=(fanout cold-pipeline)
tree=/tmp/ripple-bench-base-$(git rev-parse --short "$base")
if [ ! -d "$tree" ]; then
  git worktree add --detach "$tree" "$base" >/dev/null
fi
swift build -c release --package-path "$tree/Benchmarks" >/dev/null
swift build -c release --package-path Benchmarks >/dev/null
old="$tree/Benchmarks/.build/release/ripple-bench"
new="Benchmarks/.build/release/ripple-bench"
for round in $(seq "$rounds"); do
  for filter in "${filters[@]}"; do
    echo "== round $round, $filter: base $(git rev-parse --short "$base")"
    "$old" --filter "$filter" | grep -i ripple || true
    echo "== round $round, $filter: this checkout"
    "$new" --filter "$filter" | grep -i ripple || true
  done
done
