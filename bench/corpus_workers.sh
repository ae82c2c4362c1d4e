#!/usr/bin/env bash
# Corpus cost throughput against Dask workers: `snapglyph cost` over a folder of transcripts with 1 and 2 local
# workers, interleaved, two rounds; whole command wall clock (cluster start-up included) and the load average.
# Usage: bash bench/corpus_workers.sh FOLDER   (the figures in bench/RESULTS.md used ../shared/data copied twice)
set -euo pipefail
folder=${1:?folder of transcripts}
for r in 1 2; do
  for w in 1 2; do
    s=$(date +%s.%N); python -m snapglyph.cli cost "$folder" -p claude --workers $w --out /tmp/rows-$w.csv 2>/tmp/cost-$w.err; e=$(date +%s.%N)
    echo "round $r workers $w $(echo "$e - $s" | bc) s $(uptime | sed 's/.*load average: //')"
  done
done
