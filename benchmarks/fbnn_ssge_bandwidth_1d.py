"""fBNN on the 1-D example with a wider SSGE kernel: is the entropy gradient's size the cause
of the narrow bands?

Runs ``examples/plot_extrapolation.py`` (all its arguments pass through) with SSGE's
``bandwidth="median"`` replaced by ``SCALE`` times the median pairwise distance of the
function draws (``--scale``; one isotropic bandwidth). With ``--set ssge_bandwidth=median
ssge_threshold=1.0`` and a scale of 1.5-3 SSGE recovers 0.8-0.97 of a Gaussian's entropy
gradient from 32 draws instead of 0.5-0.7 (``benchmarks/ssge_entropy_scale.py``).

Usage: python benchmarks/fbnn_ssge_bandwidth_1d.py --scale 3 --only fBNN --data-seed 0 \\
           --set ssge_bandwidth=median ssge_threshold=1.0
"""

from __future__ import annotations

import argparse
import runpy
import sys

import torch

import skfbnn.inference.vi.fbnn as fbnn
from skfbnn.stats.ssge import ssge_score


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], add_help=False)
    parser.add_argument("--scale", type=float, required=True)
    args, rest = parser.parse_known_args()

    def scaled(samples, points=None, *, threshold=0.99, bandwidth=None, jitter=0.0):
        if bandwidth == "median":
            both = (samples if points is None else torch.cat([samples, points])).double()
            bandwidth = (args.scale * torch.cdist(both, both).median()).expand(
                samples.shape[-1])
        return ssge_score(samples, points, threshold=threshold, bandwidth=bandwidth,
                          jitter=jitter)

    fbnn.ssge_score = scaled
    sys.argv = ["plot_extrapolation.py", *rest]
    runpy.run_path("examples/plot_extrapolation.py", run_name="__main__")


if __name__ == "__main__":
    main()
