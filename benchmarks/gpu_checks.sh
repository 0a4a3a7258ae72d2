#!/usr/bin/env bash
# The checks that need a GPU, in one script sized for a short device lease (about 15 minutes
# of device time in all, at most 10 minutes a command): run `bash benchmarks/gpu_checks.sh
# quick` (tests and the two 5x / 60 s targets, ~5 min) and, on a second call if time is left,
# `bash benchmarks/gpu_checks.sh paper` (the paper-size MNIST sweep, target < 15 min on a GPU).
# Every stage has its own time limit, prints what it measured next to its baseline, and
# writes its log under $OUT (or ./gpu_logs) so that a stage that runs out of time still
# reports what it did.
#
# The lent machine cannot reach a package index and its image has PyTorch, scikit-learn and
# the usual scientific stack but not skorch or Opacus. Fetch their wheels here first, keep
# them out of git, and carry them (device `run` with carry=[".whl"]):
#   echo /.whl/ >> .git/info/exclude
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
#       --implementation cp --platform any -d .whl skorch==1.4.0 opacus==1.6.0
set -u
cd "$(dirname "$0")/.."
out="${OUT:-gpu_logs}"
mkdir -p "$out"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
if ls .whl/*.whl >/dev/null 2>&1; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl >"$out/install.log" 2>&1 || echo "wheel install failed"
    export PYTHONPATH="$PYTHONPATH:/tmp/site"
fi
nvidia-smi -L 2>&1 | tee "$out/device.txt"
python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.cuda.is_available())" \
    | tee -a "$out/device.txt"

stage() {  # stage NAME SECONDS COMMAND...
    local name=$1 limit=$2
    shift 2
    echo "== $name (limit ${limit}s)"
    local t0=$SECONDS
    timeout "$limit" "$@" >"$out/$name.log" 2>&1
    local rc=$?
    tail -n 25 "$out/$name.log"
    echo "== $name: exit $rc after $((SECONDS - t0)) s"
}

case "${1:-quick}" in
quick)
    # the CUDA paths of the nets, batched training and the entropy kernel, against CPU runs
    stage cuda_tests 120 python3 -m pytest -q -p no:cacheprovider tests/nn \
        tests/privacy/test_entropy.py tests/privacy/test_plugin_entropy.py
    # 50 digits draws, batched against 50 sequential skorch fits (target >= 5x)
    stage sweep_digits 180 python3 benchmarks/bench_sweep.py --device cuda --n-draws 50
    # the entropy bound: the default 48-pair grid on 10,000 x 784 rows (target < 60 s)
    stage entropy_10k 240 python3 benchmarks/bench_privacy.py --n-entropy 10000 --device cuda
    ;;
paper)
    # 50,000 x 784 synthetic rows projected to 100, 200 anchor-noise draws (< 15 min)
    stage sweep_paper 570 python3 benchmarks/bench_sweep.py --device cuda --data synthetic-mnist \
        --n-rows 60000 --n-draws 200 --sequential-draws 5
    ;;
*)
    echo "usage: bash benchmarks/gpu_checks.sh [quick|paper]" >&2
    exit 2
    ;;
esac
