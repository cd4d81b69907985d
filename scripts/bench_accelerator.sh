#!/usr/bin/env bash
# The accelerator run: one command for the day a GPU or TPU is lent, finished in under 10 minutes.
#
#   bash scripts/bench_accelerator.sh [--out out/accelerator.json] [--quick] [--no-install]
#                                     [--python PATH] [--budget-s 570] [--smoke]
#
# 1. detects the platform: nvidia-smi -> NVIDIA GPU (extra "cuda"); /dev/accel*, TPU_NAME /
#    TPU_ACCELERATOR_TYPE, or a Google (0x1ae0) PCI device behind /dev/vfio -> TPU (extra "tpu");
#    otherwise CPU, where nothing is timed: it refuses (exit 2) unless --smoke;
# 2. uses .venv (created with `make install` if missing) and installs the repo with that extra, i.e.
#    the JAX plugin pinned in pyproject.toml (jax[cuda12] / jax[tpu] == the pinned jax), unless the
#    pinned JAX already sees the device. pip is the only network access; --no-install skips it, and a
#    failed install (an offline machine) is a warning: the run goes on with the JAX that is there and
#    the JSON says which version that was ("jax_matches_pin"). --python PATH runs another interpreter
#    that already has JAX for the device (e.g. a machine image's), with --no-install implied;
# 3. scripts/bench_accelerator.py: the platform's kernels (pallas_gpu / pallas_tpu attention, the
#    quantized matmul) compiled and checked against their references on the device; decode's fraction
#    of HBM bandwidth and prefill's fraction of peak FLOP/s (spec-sheet peaks per device kind); engine
#    throughput at batch 1, 32 and 256 (SmolLM2-135M, bfloat16); all into --out (one JSON object),
#    inside what is left of --budget-s (default 570 s for the whole script).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
OUT=out/accelerator.json
QUICK=0
SMOKE=0
INSTALL=1
PY=.venv/bin/python
BUDGET=570
while [[ $# -gt 0 ]]; do
  case "$1" in
    --out) OUT="${2:?--out needs a path}"; shift 2 ;;
    --out=*) OUT="${1#--out=}"; shift ;;
    --quick) QUICK=1; shift ;;
    --smoke) SMOKE=1; shift ;;
    --no-install) INSTALL=0; shift ;;
    --python) PY="${2:?--python needs a path}"; INSTALL=0; shift 2 ;;
    --python=*) PY="${1#--python=}"; INSTALL=0; shift ;;
    --budget-s) BUDGET="${2:?--budget-s needs seconds}"; shift 2 ;;
    --budget-s=*) BUDGET="${1#--budget-s=}"; shift ;;
    -h|--help) sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "error: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

step() { printf '\n==> %s\n' "$*" >&2; }
START=$(date +%s)
elapsed() { echo $(( $(date +%s) - START )); }

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
if [[ "$PLATFORM" == cpu && "$SMOKE" == 0 ]]; then
  echo "error: no GPU or TPU here, and nothing is timed on the host CPU." >&2
  echo "       --smoke runs every step on tiny shapes (kernels interpreted) with timings null." >&2
  exit 2
fi

# ---- 2. environment
step "python environment ($PY)"
if [[ ! -x "$PY" ]]; then
  if [[ "$PY" == .venv/bin/python ]]; then
    echo ".venv is missing: make install" >&2
    make install
  else
    echo "error: --python $PY is not an executable" >&2
    exit 2
  fi
fi
PIN=$(sed -n 's/^ *"jax==\([0-9.]*\)".*/\1/p' pyproject.toml | head -1)
backend_and_version() { "$PY" -c 'import jax; print(jax.default_backend(), jax.__version__)' 2>/dev/null || echo "none none"; }
read -r BACKEND VERSION < <(backend_and_version)
echo "jax $VERSION (pinned: $PIN), backend: $BACKEND" >&2
if [[ -n "$EXTRA" && "$INSTALL" == 1 ]]; then
  if [[ "$BACKEND" == "$PLATFORM" && "$VERSION" == "$PIN" ]]; then
    echo "the pinned JAX already runs on the $PLATFORM: nothing to install" >&2
  else
    echo "pip install -e .[$EXTRA]  (jax[$EXTRA...]==$PIN)" >&2
    if ! timeout 300 "$PY" -m pip install -q --disable-pip-version-check -e ".[$EXTRA]"; then
      echo "warning: installing the [$EXTRA] extra failed (offline?); going on with the JAX that is installed" >&2
    fi
    read -r BACKEND VERSION < <(backend_and_version)
    echo "jax $VERSION, backend: $BACKEND" >&2
  fi
fi
if [[ "$PLATFORM" != cpu && "$BACKEND" != "$PLATFORM" ]]; then
  echo "error: a $PLATFORM was detected but JAX runs on '$BACKEND': the [$EXTRA] extra is not working," >&2
  echo "       and nothing is timed on the host CPU (try --python with an interpreter whose JAX sees it)" >&2
  exit 2
fi

# ---- 3. kernels and engine, one JSON
LEFT=$(( BUDGET - $(elapsed) ))
if (( LEFT < 120 )); then
  echo "error: only ${LEFT} s of the ${BUDGET} s budget left after the install; not starting" >&2
  exit 1
fi
FLAGS=(--out "$OUT" --budget-s "$(( LEFT - 45 ))" --platform-detected "$PLATFORM")
[[ "$QUICK" == 1 ]] && FLAGS+=(--quick)
[[ "$SMOKE" == 1 ]] && FLAGS+=(--smoke)
step "scripts/bench_accelerator.py ${FLAGS[*]} (${LEFT} s left)"
RC=0
timeout "$LEFT" "$PY" scripts/bench_accelerator.py "${FLAGS[@]}" >/dev/null || RC=$?
if [[ ! -s "$OUT" ]]; then
  echo "error: bench_accelerator.py wrote no result (exit $RC)" >&2
  exit 1
fi
"$PY" -c 'import json, sys; r = json.load(open(sys.argv[1])); print(json.dumps({**r.get("summary", {}), "passed": r.get("passed"), "complete": r.get("complete"), "seconds": r.get("seconds"), "out": sys.argv[1]}, indent=2))' "$OUT"
echo "done in $(elapsed) s: $OUT" >&2
exit "$RC"
