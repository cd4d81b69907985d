#!/usr/bin/env bash
# One command for a GPU or TPU machine (it also runs on a plain CPU):
#
#   bash scripts/bench_accelerator.sh [--out out/accelerator.json] [--quick] [--no-install]
#
# 1. detects the platform: nvidia-smi -> NVIDIA GPU (extra "cuda"); /dev/accel*, TPU_NAME /
#    TPU_ACCELERATOR_TYPE, or a Google (0x1ae0) PCI device behind /dev/vfio -> TPU (extra "tpu");
#    otherwise CPU (no extra);
# 2. uses .venv (created with `make install` if missing) and installs the repo with that extra
#    (pip is the only network access; --no-install skips it);
# 3. scripts/bench_kernel.py: the Pallas ragged paged-attention kernel checked against its reference
#    on this device, then timed (achieved bandwidth as a fraction of the device's peak);
# 4. scripts/bench_engine.py (--quick: its smallest settings, no HF comparison);
# 5. merges platform, device, jax version, kernel check, kernel timing and engine results into --out.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
OUT=out/accelerator.json
QUICK=0
INSTALL=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --out) OUT="${2:?--out needs a path}"; shift 2 ;;
    --out=*) OUT="${1#--out=}"; shift ;;
    --quick) QUICK=1; shift ;;
    --no-install) INSTALL=0; shift ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "error: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

step() { printf '\n==> %s\n' "$*" >&2; }
START=$(date +%s)
PY=.venv/bin/python
WORK="$(dirname "$OUT")/accelerator_parts"
mkdir -p "$WORK"

# ---- 1. platform
step "detecting the platform"
has_google_pci() {
  local f
  for f in /sys/bus/pci/devices/*/vendor; do
    [[ -r "$f" && "$(cat "$f")" == "0x1ae0" ]] && return 0
  done
  return 1
}
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  PLATFORM=gpu; EXTRA=cuda
  nvidia-smi -L >&2
elif compgen -G "/dev/accel*" >/dev/null || [[ -n "${TPU_NAME:-}${TPU_ACCELERATOR_TYPE:-}" ]] \
     || { [[ -d /dev/vfio ]] && has_google_pci; }; then
  PLATFORM=tpu; EXTRA=tpu
else
  PLATFORM=cpu; EXTRA=""
fi
echo "platform: $PLATFORM${EXTRA:+ (extra: $EXTRA)}" >&2

# ---- 2. environment
step "python environment (.venv)"
if [[ ! -x "$PY" ]]; then
  echo ".venv is missing: make install" >&2
  make install
fi
if [[ -n "$EXTRA" && "$INSTALL" == 1 ]]; then
  echo "pip install -e .[$EXTRA]" >&2
  .venv/bin/pip install -q --disable-pip-version-check -e ".[$EXTRA]"
fi
BACKEND=$("$PY" -c 'import jax; print(jax.default_backend())')
echo "jax backend: $BACKEND" >&2
if [[ "$PLATFORM" != cpu && "$BACKEND" == cpu ]]; then
  echo "warning: a $PLATFORM was detected but jax runs on the CPU (did the [$EXTRA] install work?)" >&2
fi

QUICK_FLAG=()
[[ "$QUICK" == 1 ]] && QUICK_FLAG=(--quick)

# ---- 3. kernel
step "kernel: check against the reference, then timing (scripts/bench_kernel.py ${QUICK_FLAG[*]:-})"
KERNEL_RC=0
"$PY" scripts/bench_kernel.py "${QUICK_FLAG[@]}" --out "$WORK/kernel.json" >/dev/null || KERNEL_RC=$?
if [[ ! -s "$WORK/kernel.json" ]]; then
  echo "error: bench_kernel.py wrote no result (exit $KERNEL_RC)" >&2
  exit 1
fi
[[ "$KERNEL_RC" == 0 ]] || echo "warning: the kernel check failed (exit $KERNEL_RC); details in the JSON" >&2

# ---- 4. engine
if [[ "$QUICK" == 1 ]]; then
  # bench_engine.py always builds max(64, batch) sequence slots (32 step programs to compile); the
  # rest is kept small: 8 short requests, one sweep point, no HF run.
  ENGINE_ARGS=(--requests 8 --batch 4 --sweep 4 --sweep-requests 4 --kv-tokens 4096 --skip-hf)
else
  ENGINE_ARGS=()
fi
step "engine: scripts/bench_engine.py ${ENGINE_ARGS[*]:-}"
"$PY" scripts/bench_engine.py "${ENGINE_ARGS[@]}" --out "$WORK/engine" > "$WORK/engine.jsonl"

# ---- 5. merge
step "merging into $OUT"
"$PY" - "$WORK/kernel.json" "$WORK/engine.jsonl" "$OUT" "$PLATFORM" "$QUICK" "$START" "$KERNEL_RC" <<'EOF'
import json, sys, time
from pathlib import Path

kernel_path, engine_path, out, platform, quick, start, kernel_rc = sys.argv[1:]
kernel = json.loads(Path(kernel_path).read_text())
engine = {}
for line in Path(engine_path).read_text().splitlines():
    line = line.strip()
    if line.startswith("{"):
        record = json.loads(line)
        engine[record.pop("bench")] = record
import jax
merged = {
    "platform": platform, "jax_backend": kernel["platform"], "device": kernel["device"],
    "device_count": kernel["device_count"], "jax_version": jax.__version__, "quick": quick == "1",
    "kernel_check": kernel["check"], "kernel_timing": {
        "timed_backend": kernel["timed_backend"], "engine_backend": kernel["engine_backend"],
        "bandwidth_fraction": kernel["bandwidth_fraction"], "peak": kernel["peak"],
        "runs": kernel["timing"], "shape": kernel["timing_shape"]},
    "engine_bench": engine, "passed": kernel_rc == "0" and kernel["check"]["passed"],
    "seconds": round(time.time() - int(start), 1),
}
Path(out).parent.mkdir(parents=True, exist_ok=True)
Path(out).write_text(json.dumps(merged, indent=2) + "\n")
t = merged["kernel_timing"]
summary = {"platform": platform, "device": merged["device"], "jax": merged["jax_version"],
           "kernel_check_passed": kernel["check"]["passed"],
           "kernel_bandwidth_fraction": t["bandwidth_fraction"], "peak": t["peak"]["source"],
           "engine": {k: v for k, v in engine.items() if k in ("continuous_vs_static", "paged_vs_contiguous")},
           "seconds": merged["seconds"], "out": out}
print(json.dumps(summary, indent=2))
EOF
echo "done in $(( $(date +%s) - START )) s: $OUT" >&2
exit "$KERNEL_RC"
