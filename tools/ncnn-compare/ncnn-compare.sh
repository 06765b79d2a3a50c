#!/usr/bin/env bash
# Side-by-side images/s of frugal's Vulkan executor and ncnn's Vulkan path on
# the same device, one network after the other. A hand-run benchmark, not part
# of CI: see README.md next to this file (how to build ncnn's benchncnn).
#
#   tools/ncnn-compare/ncnn-compare.sh --ncnn-src DIR --benchncnn FILE [--frugal FILE]...
#       [--nets squeezenet1_1,mobilenet_v2,resnet18,googlenet,resnet50] [--batches 1,8]
#       [--threads 2] [--loops 4] [--repeat 3] [--device 0]
# --frugal may be given several times (builds before and after a change): one
# images/s and ratio column pair each.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
frugals=()
ncnn_src="" benchncnn="" nets="squeezenet1_1,mobilenet_v2,resnet18,googlenet,resnet50"
batches="1" threads=2 loops=4 repeat=3 device=0
usage() { sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --ncnn-src) ncnn_src=$2; shift 2 ;;
    --benchncnn) benchncnn=$2; shift 2 ;;
    --frugal) frugals+=("$2"); shift 2 ;;
    --nets) nets=$2; shift 2 ;;
    --batches) batches=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --loops) loops=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --device) device=$2; shift 2 ;;
    *) usage ;;
  esac
done
[ ${#frugals[@]} -gt 0 ] || frugals=("$here/../../build/frugal")
[ -n "$ncnn_src" ] && [ -x "$benchncnn" ] || usage
for f in "${frugals[@]}"; do [ -x "$f" ] || usage; done

# frugal zoo name -> ncnn benchmark model and its input (w,h,c)
ncnn_model() {
  case "$1" in
    squeezenet1_1) echo "squeezenet [227,227,3]" ;;
    mobilenet_v2) echo "mobilenet_v2 [224,224,3]" ;;
    mobilenet_v1) echo "mobilenet [224,224,3]" ;;
    resnet18) echo "resnet18 [224,224,3]" ;;
    resnet50) echo "resnet50 [224,224,3]" ;;
    googlenet) echo "googlenet [224,224,3]" ;;
    alexnet) echo "alexnet [227,227,3]" ;;
    vgg16_bn) echo "vgg16 [224,224,3]" ;;
    efficientnet_b0) echo "efficientnet_b0 [224,224,3]" ;;
    *) echo "" ;;
  esac
}

echo "machine   $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "ncnn      $(git -C "$ncnn_src" log -1 --format='%h %cs' 2>/dev/null || echo '?'): $benchncnn $loops $threads 0 $device 0 param=... shape=..."
for i in "${!frugals[@]}"; do
  f=${frugals[$i]}
  echo "frugal $i  $(git -C "$(dirname "$f")" log -1 --format='%h %cs' 2>/dev/null || echo '?'): $f bench-vulkan --no-conv --repeat $repeat --devices $device"
done
echo "ncnn runs one image at a time: its images/s is the same at every batch."
echo
rows=()
for net in ${nets//,/ }; do
  read -r model shape <<<"$(ncnn_model "$net")"
  [ -n "$model" ] || { echo "no ncnn benchmark model for $net" >&2; exit 2; }
  out=$(cd "$ncnn_src/benchmark/models" && "$benchncnn" "$loops" "$threads" 0 "$device" 0 \
    "param=$model.param" "shape=$shape" 2>&1)
  ncnn_ms=$(grep -E 'avg = ' <<<"$out" | tail -1 | sed -E 's/.*avg = *([0-9.]+).*/\1/')
  [ -n "$ncnn_ms" ] || { echo "benchncnn failed on $model:" >&2; echo "$out" >&2; exit 1; }
  for b in ${batches//,/ }; do
    row=$(awk -v n="$net" -v b="$b" -v ms="$ncnn_ms" 'BEGIN { printf "%-16s %5d %12.1f %11.2f", n, b, ms, 1000 / ms }')
    for f in "${frugals[@]}"; do
      out=$("$f" bench-vulkan --nets "$net" --batch "$b" --repeat "$repeat" --devices "$device" --no-conv 2>&1)
      ips=$(awk -v n="$net" '$1 == n {print $4}' <<<"$out")
      [ -n "$ips" ] || { echo "frugal bench-vulkan failed on $net:" >&2; echo "$out" >&2; exit 1; }
      row+=$(awk -v f="$ips" -v ms="$ncnn_ms" 'BEGIN { printf " %13.2f %9.2f", f, f / (1000 / ms) }')
    done
    rows+=("$row")
  done
done
head=$(printf '%-16s %5s %12s %11s' network batch "ncnn ms/img" "ncnn img/s")
for i in "${!frugals[@]}"; do head+=$(printf ' %13s %9s' "frugal$i img/s" "/ncnn"); done
echo "$head"
printf '%s\n' "${rows[@]}"
echo "load after $(cut -d' ' -f1-3 /proc/loadavg)"
