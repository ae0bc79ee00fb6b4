#!/bin/bash
# On a machine with a CUDA GPU: the tests marked gpu, then the step benchmarks on the GPU, each
# output kept in OUTDIR (default gpu_results/). MNIST-1D for the CNN step from DATA_HOME (default
# $SKFBNN_DATA_HOME); BlackJAX beside skfbnn in `peers` when it is installed.
#     bash benchmarks/gpu.sh [OUTDIR] [DATA_HOME]
out=${1:-gpu_results}
data=${2:-$SKFBNN_DATA_HOME}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
{ nvidia-smi -L; python -c "import torch; print('torch', torch.__version__, torch.cuda.get_device_name())"
} 2>&1 | tee "$out/env.txt"
python -m pytest -q -p no:cacheprovider -m gpu tests 2>&1 | tail -25 | tee "$out/gpu_tests.txt"
python benchmarks/speed.py peers --device cuda --repeats 3 2>&1 | tee "$out/peers_cuda.txt"
python benchmarks/speed.py device --devices cpu cuda --k 100 --repeats 2 2>&1 | tee "$out/device.txt"
python benchmarks/speed.py device --devices cpu cuda --k 50 --repeats 1 --methods sghmc ensemble \
    --rows 20000 --hidden 256 2>&1 | tee -a "$out/device.txt"
if [ -n "$data" ]; then
    python benchmarks/speed.py network --device cuda --steps-only --k 30 --repeats 5 \
        --data-home "$data" --measurement-points 50 2>&1 | tee "$out/network_cuda.txt"
fi
