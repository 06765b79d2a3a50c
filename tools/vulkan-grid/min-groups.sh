#!/usr/bin/env bash
# Time per image of zoo networks on the Vulkan executor at several values of
# min_groups (the work groups below which a conv splits its reduction,
# docs/VULKAN.md "Split-K"), one process per run, the values interleaved per
# network; plus the slowest steps of each run. A hand-run measurement for GPUs.
#   tools/vulkan-grid/min-groups.sh [--frugal FILE] [--nets a,b] [--batch N]
#       [--repeat N] [--values 0,256,1024] [--steps N]
# min_groups 0 is what every device ran before split-K (and lavapipe still runs).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
frugal="$here/../../build/frugal"
nets=squeezenet1_1,mobilenet_v2,resnet18,googlenet,resnet50
batch=1 repeat=10 values=0,256,1024 steps=3
while [ $# -gt 0 ]; do
  case "$1" in
    --frugal) frugal=$2; shift 2 ;;
    --nets) nets=$2; shift 2 ;;
    --batch) batch=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --values) values=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    *) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
  esac
done
echo "machine   $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "command   FRUGAL_VULKAN_MIN_GROUPS=V $frugal run zoo:NET --executor vulkan --batch $batch --repeat $repeat --json"
printf '%-16s %6s %11s  %s\n' network min_gr "ms/img" "slowest steps (ms per call)"
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
for net in ${nets//,/ }; do
  for v in ${values//,/ }; do
    FRUGAL_VULKAN_MIN_GROUPS=$v "$frugal" run "zoo:$net" --executor vulkan --batch "$batch" --repeat "$repeat" \
      --quiet --json >"$tmp"
    ms=$(awk -F': ' '/^ "seconds_per_sample"/ { gsub(",", "", $2); printf "%.3f", $2 * 1000 }' "$tmp")
    # the steps' "layer" and "seconds" lines, slowest first
    slow=$(awk -F': ' '/"layer":/ { gsub(/[",]/, "", $2); l = $2 } /"seconds":/ && l != "" { gsub(",", "", $2);
             printf "%.3f %s\n", $2 * 1000, l; l = "" }' "$tmp" | sort -rn | head -n "$steps" |
           awk '{ printf "%s %s  ", $2, $1 }')
    printf '%-16s %6s %11s  %s\n' "$net" "$v" "$ms" "$slow"
  done
done
echo "load after $(cut -d' ' -f1-3 /proc/loadavg)"
