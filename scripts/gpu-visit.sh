#!/usr/bin/env bash
# The GPU side of scripts/gpu-truth: runs on the device machine (NVIDIA's OpenCL, no Rust), in the
# repository root, with the binaries scripts/gpu-truth packed into .gpu/. Everything it measures goes
# into $OUT/results.tar.gz (the device tool brings back few files).
set -uo pipefail
R="$OUT/results"
mkdir -p "$R"
G="$PWD/.gpu"
chmod +x "$G"/* 2>/dev/null
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
source scripts/gpu-ocl-icd.sh
lists_nvidia() { env "$@" clinfo -l 2>/dev/null | grep -q NVIDIA; }
ocl_icd lists_nvidia >> "$R/runs.txt"

{
  date -u +%FT%TZ; uname -r; nvidia-smi -L; nvidia-smi --query-gpu=driver_version,pcie.link.gen.max,pcie.link.width.max --format=csv
  env | grep -E "^(LD_|OCL|OPENCL)" | sort
  ls -la /usr/local/nvidia/lib64/libnvidia-opencl* 2>&1 | head -3
  ldconfig -p | grep -i libOpenCL
  ls -la /usr/lib/x86_64-linux-gnu/libOpenCL.so.1 /usr/local/cuda*/targets/x86_64-linux/lib/libOpenCL.so* 2>&1
  for b in "$G"/*; do echo "== ldd $b"; ldd "$b" 2>&1 | grep -E "not found|OpenCL"; done
  echo "== clxfer doctor, the default loader"; "$G/clxfer" doctor; echo "exit $?"
  echo "== clxfer doctor, ocl-icd"; env $OCLICD "$G/clxfer" doctor; echo "exit $?"
  echo "== NVIDIA's ICD: $NV"; ls -la /etc/OpenCL/vendors/ 2>&1; cat /etc/OpenCL/vendors/* 2>&1
  echo "== ocl-icd loading NVIDIA's ICD, what the dynamic linker says"
  env $LIBS OCL_ICD_FILENAMES=$NV LD_DEBUG=libs clinfo -l 2>&1 | grep -i -E "nvidia|cuda|error|cannot" | head -40
} > "$R/machine.txt" 2>&1

scen() {  # scen NAME ENV... : the scenario program, its trace in $R/NAME/
  local name=$1; shift
  mkdir -p "$R/$name"
  env "$@" CLXFER_DIR="$R/$name" SCEN_MIB="${SCEN_MIB:-64}" timeout 240 "$G/clxfer-gpu-scenarios" \
    > "$R/$name/scenarios.txt" 2> "$R/$name/stderr.txt"
  echo "$name: exit $?" >> "$R/runs.txt"
}
scen none
scen layer $OCLICD OPENCL_LAYERS="$G/libclxfer.so" CLXFER_RULES=auto CLXFER_LOG=info
scen preload LD_PRELOAD="$G/libclxfer.so" CLXFER_RULES=auto CLXFER_LOG=info
SCEN_MIB=4 scen example LD_PRELOAD="$G/libclxfer.so" CLXFER_REPORT="$R/example/summary.md"

# Overhead: clpeak's transfer bandwidth and the storm, without clxfer and traced, interleaved.
# clpeak's platform number: NVIDIA's, the same under both loaders (PoCL first in OCL_ICD_FILENAMES).
P=$(clinfo -l 2>/dev/null | grep "^Platform" | grep -n "NVIDIA" | head -1 | cut -d: -f1)
P=$(( ${P:-2} - 1 ))
for round in $(seq "${ROUNDS:-3}"); do
  # none and preload: the machine's default loader (CUDA's); plain and layer: ocl-icd.
  for cfg in none preload plain layer; do
    case $cfg in
      none) e=(); p=$P;;
      preload) e=(LD_PRELOAD="$G/libclxfer.so"); p=$P;;
      plain) e=($OCLICD); p=0;;
      layer) e=($OCLICD OPENCL_LAYERS="$G/libclxfer.so"); p=0;;
    esac
    mkdir -p /tmp/t; rm -f /tmp/t/*
    { echo "== round $round $cfg"; env "${e[@]}" CLXFER_DIR=/tmp/t timeout 120 "$G/clpeak" -p "$p" -d 0 --transfer-bandwidth; } >> "$R/clpeak.txt" 2>&1
    rm -f /tmp/t/*
    { echo "== round $round $cfg"; env "${e[@]}" CLXFER_DIR=/tmp/t TEST_PLATFORM=NVIDIA timeout 120 "$G/clxfer-storm" 200000 1; } >> "$R/storm.txt" 2>&1
    rm -f /tmp/t/*
    { echo "== round $round $cfg"; env "${e[@]}" CLXFER_DIR=/tmp/t TEST_PLATFORM=NVIDIA timeout 120 "$G/clxfer-storm" 2000000 calls; } >> "$R/calls.txt" 2>&1
  done
  # What NVIDIA's driver itself charges for timing every command (the storm doing it, no clxfer).
  for own in profiling events callbacks; do
    { echo "== round $round own-$own"; TEST_PLATFORM=NVIDIA timeout 120 "$G/clxfer-storm" 200000 1 $own; } >> "$R/storm.txt" 2>&1
  done
done
echo "platform index for clpeak: $P" >> "$R/runs.txt"
# Device timing's cost (issue #27): the storm in the default (sampled), all and off modes, one and
# four threads, and the scenario grid's bandwidths sampled against all.
CONFIGS="none summary trace summary-all trace-all summary-off trace-off own-events" \
  STORM_OUT="$R/storm-modes-1.txt" bash scripts/gpu-storm.sh > "$R/storm-modes.txt" 2>&1
THREADS=4 ENQUEUES=50000 CONFIGS="none summary trace summary-all trace-all" \
  STORM_OUT="$R/storm-modes-4.txt" bash scripts/gpu-storm.sh >> "$R/storm-modes.txt" 2>&1
bash scripts/gpu-sampling.sh > "$R/sampling.txt" 2>&1
tar czf "$OUT/results.tar.gz" -C "$OUT" results && rm -rf "$R"
ls -la "$OUT"
