#!/usr/bin/env bash
# The real-GPU check of issue 10, in about ten minutes on one H200 (or any NVIDIA GPU):
#
#   1. record nvidia-smi (the card, and `topo -m` for the links, S28);
#   2. whichgpu bench --quick        -> calibration profile (matmul per precision, memory,
#                                       host and peer bandwidth beside the datasheet);
#   3. whichgpu bench model ...      -> prefill/decode (and one training step) of random-weight
#                                       stand-ins of three presets, beside the estimates, with
#                                       and without the new profile, appended as rows;
#   4. whichgpu validate speed       -> the error of those rows;
#   5. a summary.
#
# Everything goes to validation/calibration/<host>-<yyyymmdd>/ (profile.json, speed.csv,
# memory.csv, nvidia-smi.txt, topo.txt, bench.json, model-*.json, validate.json, summary.txt).
# Safe to rerun: the profile is rewritten, rows already in the CSVs are not written twice.
#
#   scripts/gpu_check.sh              run it (make gpu-check)
#   scripts/gpu_check.sh --dry-run    print the plan and what is installed; run nothing
#   scripts/gpu_check.sh --out DIR    write somewhere else
#
# Needs: an NVIDIA driver (nvidia-smi), Python >= 3.11 with PyTorch (installed with pip when
# missing), and whichgpu's dependencies. Without network (a lent device machine), put wheels in
# .whl/ first (make gpu-check-wheels on a machine with pip access); they are installed from
# there. Exit status: 0 done, 2 no GPU / missing what it needs, 1 a step failed.
set -euo pipefail
cd "$(dirname "$0")/.."

DRY=0
OUT_DIR=""
MODELS=("llama-3.2-1b --train --context 1024 --batch 4"
        "llama-3.1-8b --batch 8 --prompt-tokens 512 --output-tokens 128"
        "qwen2.5-7b --batch 1 --prompt-tokens 1024 --output-tokens 128")
while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) DRY=1 ;;
    --out) OUT_DIR="$2"; shift ;;
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
    *) echo "gpu_check.sh: unknown option $1 (use --dry-run, --out DIR)" >&2; exit 2 ;;
  esac
  shift
done

HOST=$(hostname -s 2>/dev/null || echo host)
DAY=$(date -u +%Y%m%d)
OUT_DIR=${OUT_DIR:-validation/calibration/${HOST}-${DAY}}

# Python: the project's venv if it has torch, else the system's (a GPU image ships torch there)
PY=${PYTHON:-}
if [ -z "$PY" ]; then
  if [ -x .venv/bin/python ] && .venv/bin/python -c "import torch" 2>/dev/null; then
    PY=.venv/bin/python
  elif command -v python3 >/dev/null 2>&1; then
    PY=python3
  else
    PY=.venv/bin/python
  fi
fi
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1
WG=("$PY" -c "import sys; from whichgpu.cli import main; sys.argv[0] = 'whichgpu'; main()")

have() { "$PY" -c "import $1" >/dev/null 2>&1; }

plan() {
  echo "whichgpu GPU check: plan"
  echo "  python:   $PY ($("$PY" --version 2>&1 || echo missing))"
  echo "  torch:    $("$PY" -c 'import torch; print(torch.__version__, "cuda", torch.version.cuda)' 2>/dev/null || echo 'missing: pip install torch (or from .whl/)')"
  echo "  whichgpu: $(have whichgpu.cli && echo importable || echo 'dependencies missing: pip install -e . (or from .whl/)')"
  echo "  driver:   $(command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1 || echo 'no nvidia-smi: this machine has no NVIDIA GPU')"
  echo "  output:   $OUT_DIR/"
  echo "steps:"
  echo "  1. nvidia-smi > $OUT_DIR/nvidia-smi.txt; nvidia-smi topo -m > $OUT_DIR/topo.txt"
  echo "  2. whichgpu bench --quick --output $OUT_DIR/profile.json --json > $OUT_DIR/bench.json"
  local i=0
  for m in "${MODELS[@]}"; do
    i=$((i + 1))
    echo "  3.$i whichgpu bench model $m --calibration $OUT_DIR/profile.json --append $OUT_DIR --json"
  done
  echo "  4. whichgpu validate speed --file $OUT_DIR/speed.csv --json > $OUT_DIR/validate.json"
  echo "  5. summary -> $OUT_DIR/summary.txt"
}

if [ "$DRY" = 1 ]; then
  plan
  exit 0
fi

if ! command -v nvidia-smi >/dev/null 2>&1; then
  echo "gpu_check.sh: no nvidia-smi here: this needs a machine with an NVIDIA GPU and its driver (--dry-run prints the plan)" >&2
  exit 2
fi

pip_install() {  # from .whl/ when present (no network on a lent machine), else the index
  if [ -d .whl ] && ls .whl/*.whl >/dev/null 2>&1; then
    "$PY" -m pip install -q --no-index --find-links .whl "$@"
  else
    "$PY" -m pip install -q "$@"
  fi
}

if ! have torch; then
  echo "installing PyTorch (pip install torch) ..."
  pip_install torch || { echo "gpu_check.sh: PyTorch is missing and could not be installed" >&2; exit 2; }
fi
if ! have whichgpu.cli; then
  echo "installing whichgpu's dependencies ..."
  pip_install -e . --no-build-isolation 2>/dev/null || pip_install typer rich pydantic platformdirs huggingface_hub gguf \
    || { echo "gpu_check.sh: whichgpu's dependencies are missing and could not be installed" >&2; exit 2; }
fi
have pynvml || pip_install nvidia-ml-py >/dev/null 2>&1 || true  # optional: nvidia-smi is enough

mkdir -p "$OUT_DIR"
echo "== 1. the card"
nvidia-smi > "$OUT_DIR/nvidia-smi.txt" 2>&1 || true
nvidia-smi topo -m > "$OUT_DIR/topo.txt" 2>&1 || true
head -20 "$OUT_DIR/nvidia-smi.txt"

echo "== 2. whichgpu bench --quick"
"${WG[@]}" bench --quick --output "$OUT_DIR/profile.json" --json > "$OUT_DIR/bench.json"

echo "== 3. whichgpu bench model"
i=0
for m in "${MODELS[@]}"; do
  i=$((i + 1))
  # shellcheck disable=SC2086
  "${WG[@]}" bench model $m --calibration "$OUT_DIR/profile.json" --append "$OUT_DIR" --json \
    > "$OUT_DIR/model-$i.json" || echo "bench model $m failed (see above); continuing"
done

echo "== 4. whichgpu validate speed on the new rows"
if [ -f "$OUT_DIR/speed.csv" ]; then
  "${WG[@]}" validate speed --file "$OUT_DIR/speed.csv" --json > "$OUT_DIR/validate.json"
fi

echo "== 5. summary"
"$PY" scripts/gpu_check_summary.py "$OUT_DIR" | tee "$OUT_DIR/summary.txt"
