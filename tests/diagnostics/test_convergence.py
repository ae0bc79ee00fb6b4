"""Tests for skfbnn.diagnostics.convergence (rank-normalised split R-hat and ESS)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.signal import lfilter

from skfbnn.diagnostics import ess_bulk, ess_mean, ess_tail, split_rhat

ALL_DIAGNOSTICS = [split_rhat, ess_bulk, ess_tail, ess_mean]


def _stationary_ar1(rng: np.random.Generator, rho: float, shape: tuple) -> np.ndarray:
    """AR(1) chains x_t = rho x_{t-1} + e_t started from the stationary law."""
    e = rng.standard_normal(shape)
    e[:, 0] /= np.sqrt(1.0 - rho**2)
    return lfilter([1.0], [1.0, -rho], e, axis=1)


# --------------------------------------------------------------------------- #
# 1. AR(1) oracle: ESS = S (1 - rho) / (1 + rho)
# --------------------------------------------------------------------------- #
# Tolerances come from the estimator's own sampling variability: over 200
# seeds with 4 x 20000 draws the relative standard deviation of ESS / truth was
# 1.1% (rho=0), 2.1% (rho=0.5) and 4.5% (rho=0.9), with a mean bias < 0.6%, for
# both ess_mean and ess_bulk (ranks of Gaussian draws are nearly linear).  The
# tolerances are about 3.5 standard deviations; they fail for e.g. a missing
# factor 2 in tau or a lost multi-chain variance term.
@pytest.mark.parametrize("rho, rtol", [(0.0, 0.04), (0.5, 0.075), (0.9, 0.16)])
def test_ess_matches_ar1_oracle(rho: float, rtol: float) -> None:
    draws = _stationary_ar1(np.random.default_rng(2021), rho, (4, 20000))
    expected = draws.size * (1.0 - rho) / (1.0 + rho)
    assert ess_mean(draws) == pytest.approx(expected, rel=rtol)
    assert ess_bulk(draws) == pytest.approx(expected, rel=rtol)
    # The tail ESS of an AR(1) process is also well below S when correlated.
    assert ess_tail(draws) < draws.size * (1.2 if rho == 0 else 0.8)


# --------------------------------------------------------------------------- #
# 2. R-hat detects non-mixing
# --------------------------------------------------------------------------- #
def test_rhat_shifted_and_iid_chains() -> None:
    rng = np.random.default_rng(7)
    iid = rng.standard_normal((4, 1000))
    shifted = rng.standard_normal((2, 1000)) + np.array([[0.0], [1.0]])
    assert split_rhat(iid) < 1.01
    assert split_rhat(shifted) > 1.1


def test_rhat_detects_trend_with_single_chain() -> None:
    rng = np.random.default_rng(8)
    n = 1000
    drifting = rng.standard_normal((1, n)) + np.linspace(0.0, 2.0, n)
    assert split_rhat(drifting) > 1.01
    assert split_rhat(rng.standard_normal((1, n))) < 1.01


def test_rhat_detects_scale_difference_via_folding() -> None:
    # Same location, different scales: invisible to bulk R-hat, seen by folding.
    rng = np.random.default_rng(9)
    draws = rng.standard_normal((4, 1000)) * np.array([[1.0], [1.0], [1.0], [3.0]])
    assert split_rhat(draws) > 1.05


# --------------------------------------------------------------------------- #
# 3. Reference values from ArviZ
# --------------------------------------------------------------------------- #
def _ar1_loop(innovations: np.ndarray, rho: float, x0: np.ndarray) -> np.ndarray:
    x = np.empty_like(innovations)
    x[:, 0] = x0
    for t in range(1, innovations.shape[1]):
        x[:, t] = rho * x[:, t - 1] + innovations[:, t]
    return x


def _reference_draws() -> np.ndarray:
    """(4, 501, 6) draws: AR(1) 0.7, iid t(2), AR(1)-filtered Cauchy, chains with
    shifted means, Poisson counts (many ties), antithetic AR(1) -0.6."""
    rng = np.random.default_rng(12345)
    shape = (4, 501)
    eps = rng.standard_normal(shape)
    ar = _ar1_loop(eps, 0.7, eps[:, 0] / np.sqrt(1 - 0.7**2))
    heavy = rng.standard_t(2.0, size=shape)
    cauchy = rng.standard_cauchy(shape)
    ar_cauchy = _ar1_loop(cauchy, 0.5, cauchy[:, 0])
    shifted = rng.standard_normal(shape) + 0.4 * np.arange(4)[:, None]
    counts = rng.poisson(2.0, size=shape).astype(float)
    eps = rng.standard_normal(shape)
    antithetic = _ar1_loop(eps, -0.6, eps[:, 0])
    return np.stack([ar, heavy, ar_cauchy, shifted, counts, antithetic], axis=-1)


# Obtained with ArviZ 0.23.4 (numpy 2.4.6, scipy 1.17.1) in a separate venv:
#   ds = az.convert_to_dataset({"v": draws})
#   az.rhat(ds, method="rank"); az.ess(ds, method="bulk" | "tail" | "mean")
# for draws = _reference_draws()[:, :500] ("even"), _reference_draws() ("odd",
# the middle draw of each chain is dropped when splitting) and
# _reference_draws()[:1, :500] ("one", a single chain; ArviZ gives no R-hat)
# and _reference_draws()[:, :15] ("short": the autocorrelation sum is cut by the
# chain length rather than by a negative pair, a separate branch of Geyer's rule).
ARVIZ_REFERENCE = {
    "even": {
        "rhat": [1.0113799888938864, 0.999710019738386, 1.0077719754329784,
                 1.1270451340719414, 0.9999774915699084, 0.9998641919996623],
        "bulk": [433.25974923315607, 1808.0755033554676, 431.56577379246596,
                 21.265615541992013, 2011.7461208034902, 6501.685038062319],
        "tail": [735.4012744297744, 2015.9208361484343, 563.9221020454473,
                 797.428166002851, 1794.261489211004, 1814.8207481794643],
        "mean": [432.73706879746595, 1964.6741058357038, 692.8672469496744,
                 21.141820912700183, 1990.2883949797363, 6457.752077610336],
    },
    "odd": {
        "rhat": [1.0113702443506376, 0.9996991433951968, 1.0083055344547869,
                 1.126540781903564, 1.0001655463986305, 0.9998255140157661],
        "bulk": [433.85716538060126, 1815.0762080446448, 429.11228542957946,
                 21.459033560695083, 2011.4561819077403, 6348.6943504093915],
        "tail": [721.4523478836476, 2018.2189146304593, 563.2323838953777,
                 1132.019143907469, 1793.4684996937256, 1824.043589173183],
        "mean": [433.42848501016334, 1964.0813733094465, 692.8478448122955,
                 21.33524238357169, 1990.5617976905887, 6302.543674034675],
    },
    "short": {
        "rhat": [1.36116946967525, 1.019462409751799, 1.1598682788239207,
                 1.178386033925971, 0.9987405133951497, 1.1212068797204753],
        "bulk": [14.795985013293597, 68.44753633111628, 24.382218239843244,
                 24.627753976213064, 89.2815599920283, 97.89852951234722],
        "tail": [22.430517711171657, 83.11578947368419, 43.1310592459605,
                 69.23342939481267, 58.15384615384622, 83.11578947368425],
        "mean": [15.484714500602953, 71.99553244601279, 25.433208065758862,
                 25.4561138813702, 86.69522846373077, 97.89852951234722],
    },
    "one": {
        "bulk": [82.82992555163759, 506.3600502795179, 76.36229756072366,
                 505.0784448427017, 498.52095843262936, 1161.8275088236478],
        "tail": [129.20163042466316, 393.1397307627399, 129.51676563133083,
                 473.9927223314329, 348.0632225057795, 339.7742321858213],
        "mean": [84.02698595966834, 524.8743725256061, 163.95330503108414,
                 508.5069131077831, 482.8950079262564, 1146.3304994977339],
    },
}


@pytest.mark.parametrize("case", ["even", "odd", "one", "short"])
def test_matches_arviz_reference(case: str) -> None:
    draws = _reference_draws()
    draws = {"even": draws[:, :500], "odd": draws, "one": draws[:1, :500],
             "short": draws[:, :15]}[case]
    funcs = {"rhat": split_rhat, "bulk": ess_bulk, "tail": ess_tail, "mean": ess_mean}
    for name, expected in ARVIZ_REFERENCE[case].items():
        actual = funcs[name](draws)
        np.testing.assert_allclose(actual, expected, rtol=1e-6, err_msg=name)


# --------------------------------------------------------------------------- #
# 4. Edge cases and shapes
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("func", ALL_DIAGNOSTICS)
def test_nan_element_gives_nan_only_there(func) -> None:
    draws = np.random.default_rng(1).standard_normal((4, 100, 3))
    draws[2, 10, 1] = np.nan
    draws[0, 5, 2] = np.inf
    out = func(draws)
    assert out.shape == (3,)
    assert np.isfinite(out[0]) and np.isnan(out[1]) and np.isnan(out[2])


@pytest.mark.parametrize("func", ALL_DIAGNOSTICS)
@pytest.mark.parametrize("n_draws", [0, 1, 3])
def test_too_few_draws_gives_nan(func, n_draws: int) -> None:
    rng = np.random.default_rng(2)
    assert np.isnan(func(rng.standard_normal((4, n_draws))))
    assert np.isnan(func(rng.standard_normal((4, n_draws, 2)))).all()
    assert np.isfinite(func(rng.standard_normal((4, 4))))


@pytest.mark.parametrize("func", ALL_DIAGNOSTICS)
def test_constant_draws_give_nan(func) -> None:
    # A stuck sampler must not report a perfect ESS or R-hat.
    assert np.isnan(func(np.full((4, 200), 3.5)))
    assert np.isnan(func(np.zeros((1, 200))))


def test_chains_stuck_at_different_values() -> None:
    draws = np.repeat(np.arange(4.0)[:, None], 200, axis=1)
    assert split_rhat(draws) == np.inf
    assert ess_bulk(draws) < 10


@pytest.mark.parametrize("func", ALL_DIAGNOSTICS)
def test_event_shape_matches_elementwise(func) -> None:
    rng = np.random.default_rng(3)
    draws = _stationary_ar1(rng, 0.6, (4, 100 * 6)).reshape(4, 100, 3, 2)
    draws[1, :, 0, 1] += 2.0  # one badly mixed element
    out = func(draws)
    assert isinstance(out, np.ndarray) and out.shape == (3, 2)
    for i in range(3):
        for j in range(2):
            single = func(draws[:, :, i, j])
            assert isinstance(single, float)
            assert out[i, j] == pytest.approx(single, rel=1e-12)
    # The shifted element stands out (largest R-hat, smallest ESS).
    extreme = np.argmax(out) if func is split_rhat else np.argmin(out)
    assert np.unravel_index(extreme, out.shape) == (0, 1)


def test_rejects_one_dimensional_input() -> None:
    with pytest.raises(ValueError, match="n_chains"):
        split_rhat(np.zeros(10))
