# Sourced by the device-machine scripts (gpu-visit.sh, gpu-guest.sh): the machine has two OpenCL
# loaders, CUDA's (first for ldconfig; no OPENCL_LAYERS) and ocl-icd (which has layers). Sets NV
# (NVIDIA's ICD), LIBS (ocl-icd first) and OCLICD, the environment in which ocl-icd has NVIDIA's
# ICD alone (so NVIDIA is its platform 0), found by `ocl_icd CHECK` (below).
mkdir -p /tmp/ocl-icd /tmp/vendors
ln -sf /usr/lib/x86_64-linux-gnu/libOpenCL.so.1 /tmp/ocl-icd/libOpenCL.so.1
NV=$(ls /usr/local/nvidia/lib64/libnvidia-opencl.so.1 2>/dev/null || ldconfig -p | awk '/libnvidia-opencl.so.1 /{print $NF; exit}')
echo "$NV" > /tmp/vendors/nvidia.icd
LIBS="LD_LIBRARY_PATH=/tmp/ocl-icd${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
OCLICD="$LIBS OCL_ICD_FILENAMES=$NV"

# ocl_icd CHECK: the first way of handing ocl-icd NVIDIA's ICD (by OCL_ICD_FILENAMES or by a
# vendors folder) for which `CHECK ENV...` succeeds becomes OCLICD; says which were tried.
ocl_icd() {
  local check=$1 cand
  for cand in "OCL_ICD_FILENAMES=$NV" "OCL_ICD_VENDORS=/tmp/vendors OCL_ICD_FILENAMES=" "OCL_ICD_VENDORS=/tmp/vendors/nvidia.icd OCL_ICD_FILENAMES="; do
    # shellcheck disable=SC2086 # LIBS and cand are NAME=VALUE words for env
    if $check $LIBS $cand; then OCLICD="$LIBS $cand"; echo "ocl-icd sees NVIDIA with: $cand"; return 0; fi
    echo "ocl-icd does not see NVIDIA with: $cand"
  done
}
