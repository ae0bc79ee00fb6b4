"""Isotropic Gaussian prior on network weights and biases."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from ..exceptions import divergence_error
from ..nn.functional import Params

__all__ = ["NOISE_KEY", "LEARNED_SCALE_LIMIT", "WeightPrior", "HierarchicalWeightPrior",
           "network_params", "isotropic_log_prior"]

NOISE_KEY = "log_noise"
"""Reserved parameter name for the log observation-noise std (regression)."""


def network_params(params: Params) -> Params:
    """The parameters that belong to the network (drops the noise parameter)."""
    return {k: v for k, v in params.items() if k != NOISE_KEY}


def isotropic_log_prior(params: Params, prior_std: float) -> Tensor:
    """``sum log N(w; 0, prior_std^2)`` over network parameters, per leading batch row.

    Examples
    --------
    >>> import torch
    >>> p = {"w": torch.zeros(2, 3)}
    >>> isotropic_log_prior(p, 1.0).shape
    torch.Size([2])
    """
    total = 0.0
    n = 0
    for value in network_params(params).values():
        flat = value.reshape(value.shape[0], -1)
        total = total + flat.pow(2).sum(-1)
        n += flat.shape[1]
    var = prior_std**2
    return -0.5 * total / var - 0.5 * n * math.log(2 * math.pi * var)


class WeightPrior:
    """Isotropic Gaussian prior ``N(0, std^2 I)`` on every network weight and bias.

    Parameters
    ----------
    std : float
        Prior standard deviation, shared by all network parameters (the
        observation-noise parameter is not a weight and is excluded).

    Examples
    --------
    >>> import torch
    >>> prior = WeightPrior(2.0)
    >>> prior.log_prob({"w": torch.zeros(3, 4)}).shape
    torch.Size([3])
    """

    resample = None  # no hyperparameters to Gibbs-sample (the prior contract's member)
    gp = None

    def __init__(self, std: float) -> None:
        self.std = float(std)

    def log_prob(self, params: Params, f_measure=None, measure=None) -> Tensor:
        """``sum log N(w; 0, std^2)`` per leading parameter set."""
        return isotropic_log_prior(params, self.std)

    def log_prob_grad(self, params: Params) -> Params:
        """The gradient of :meth:`log_prob`, ``-w / std^2`` for every network parameter, in
        closed form (the same numbers autograd gives: the precision is rounded to the
        parameters' dtype first, as autograd divides by ``std^2`` in that dtype).

        Examples
        --------
        >>> import torch
        >>> WeightPrior(2.0).log_prob_grad({"w": torch.ones(1, 2)})["w"].tolist()
        [[-0.25, -0.25]]
        """
        own = network_params(params)
        if not own:
            return {}
        first = next(iter(own.values()))
        precision = float(torch.ones((), dtype=first.dtype) / self.std**2)
        return dict(zip(own, torch._foreach_mul(list(own.values()), -precision), strict=True))


HYPER_SHAPE = 2.0
"""Shape ``a`` of the Gamma(a, b) hyperprior on each group's weight precision. With
``a = 1`` the weights' marginal prior is a Student t with 2 degrees of freedom (infinite
variance): on 20 rows of Boston one chain's readout ran off, its noise to 863 standardised
units. ``a = 2`` (t with 4 degrees of freedom) fitted those rows and scored better on the
validation rows of the five small UCI sets (mean -1.525 against -1.538)."""
HYPER_RATE = 2.0
"""Rate ``b`` of that hyperprior (standardised units: prior mean precision ``a / b = 1``)."""


LEARNED_SCALE_LIMIT = 100.0
"""Largest plausible learned weight-prior std (standardised inputs): the fits we
inspected (yacht, the test data) end at 0.3-3, the test data's classifiers with a step
size of 1000 at up to 10, with 1e6 at 100-500: there the weights escaped without
overflowing, and the classifiers raised no error before."""


class HierarchicalWeightPrior:
    """Gaussian weight prior with a learned precision per parameter group.

    Each network parameter tensor (a layer's weights, or its biases) is a
    group ``g`` with ``w_g ~ N(0, 1 / lambda_g)`` and ``lambda_g ~ Gamma(a, b)``
    (``HYPER_SHAPE``, ``HYPER_RATE``), one ``lambda_g`` per chain. The
    precisions are not moved by the gradient dynamics: :meth:`resample` draws
    them from their exact conditional ``Gamma(a + n_g / 2, b + |w_g|^2 / 2)``
    (a Gibbs step, as in the SGHMC of Chen et al. 2014), and :meth:`log_prob`
    is the Gaussian prior of the weights at the current precisions.

    With a sampler ``temperature`` ``T`` the weights move under the tempered density
    ``(p(D | w) N(w; 0, 1 / lambda))^(1/T)``, whose prior part is ``N(0, T / lambda)``;
    the Gibbs step then reads the weights in untempered units,
    ``Gamma(a + n_g / 2, b + |w_g|^2 / (2 T))``, so that the pair targets the joint
    ``p(D | w)^(1/T) N(w; 0, T / lambda) Gamma(lambda; a, b)`` (without data: the
    hyperprior for ``lambda`` and ``w / sqrt(T)`` the ``T = 1`` prior). Drawing the
    precisions from the ``T = 1`` conditional instead shrinks them by ``T`` at every
    Gibbs step, and the network with them. With ``ard``
    the first layer's weights get one group per input feature (automatic relevance
    determination, MacKay 1994, Neal 1996): a feature the data do not use has its
    weights, and so its effect on the function, shrunk to zero. The
    precisions are state of the run, so one prior object serves one fit.

    Examples
    --------
    >>> import torch
    >>> prior = HierarchicalWeightPrior()
    >>> params = {"w": torch.zeros(2, 3, 4), "b": torch.zeros(2, 4)}
    >>> prior.log_prob(params).shape
    torch.Size([2])
    >>> prior.resample(params, torch.Generator().manual_seed(0))
    >>> sorted(prior.precision), prior.prior_std()["w"].shape
    (['b', 'w'], torch.Size([2]))
    >>> ard = HierarchicalWeightPrior(ard=True)   # one scale per input feature (d = 4)
    >>> ard.resample({"0.weight": torch.zeros(2, 3, 4)}, torch.Generator().manual_seed(0))
    >>> ard.prior_std()["0.weight"].shape
    torch.Size([2, 4])
    """

    gp = None  # a weight prior (the prior contract's optional member)

    def __init__(self, shape: float = HYPER_SHAPE, rate: float = HYPER_RATE,
                 ard: bool = False, temperature: float = 1.0) -> None:
        if not temperature > 0:
            kind = "ard" if ard else "learn"
            raise ValueError(
                f"temperature={temperature!r} with prior_std={kind!r}: a learned prior scale "
                "is sampled from its tempered conditional, which needs temperature > 0; give "
                "a fixed prior_std (a float) for a zero-temperature run.")
        self.shape, self.rate, self.ard = float(shape), float(rate), bool(ard)
        self.temperature = float(temperature)
        self.precision: dict[str, Tensor] = {}
        self._cache: dict[str, tuple[Tensor, Tensor]] = {}

    def _groups(self, params: Params) -> dict[str, Tensor]:
        """Each parameter as ``(C, G, n_g)``: one group per tensor, or with ``ard`` one
        per input feature for the first layer's weights (its columns)."""
        return {key: self._group(i, value)
                for i, (key, value) in enumerate(network_params(params).items())}

    def _group(self, i: int, value: Tensor) -> Tensor:
        """The ``i``-th network parameter as ``(C, G, n_g)`` (:meth:`_groups`)."""
        if self.ard and i == 0 and value.dim() == 3:  # (C, out, in): per input column
            return value.transpose(1, 2)
        return value.reshape(value.shape[0], 1, -1)

    def _precision(self, key: str, value: Tensor) -> Tensor:
        """The groups' precisions per chain ``(C, G)``: the hyperprior mean until resampled."""
        if key not in self.precision:
            mean = self.shape / self.rate
            self.precision[key] = value.new_full(value.shape[:2], mean).detach()
        return self.precision[key]

    def log_prob(self, params: Params, f_measure=None, measure=None) -> Tensor:
        """``sum_g log N(w_g; 0, 1 / lambda_g)`` per leading parameter set."""
        total = 0.0
        for key, value in self._groups(params).items():
            lam = self._precision(key, value)
            total = total + self._log_normaliser(key, lam, value.shape[2]) \
                - 0.5 * (lam * value.pow(2).sum(-1)).sum(-1)
        return total

    def log_prob_grad(self, params: Params) -> Params:
        """The gradient of :meth:`log_prob` at the current precisions, ``-lambda_g w_g``
        for every network parameter, in closed form (the same numbers autograd gives).

        Examples
        --------
        >>> import torch
        >>> prior = HierarchicalWeightPrior()  # precision a / b = 1 until resampled
        >>> prior.log_prob_grad({"w": torch.full((1, 2), 3.0)})["w"].tolist()
        [[-3.0, -3.0]]
        """
        grads = {}
        for i, (key, value) in enumerate(network_params(params).items()):
            lam = self._precision(key, self._group(i, value))  # (C, G)
            if lam.shape[1] == 1:  # one group: a precision per chain
                grads[key] = value * -lam.reshape(-1, *[1] * (value.dim() - 1))
            else:  # ard: one per input column of the first layer's (C, out, in) weights
                grads[key] = value * -lam.unsqueeze(1)
        return grads

    def _log_normaliser(self, key: str, lam: Tensor, n: int) -> Tensor:
        """``sum_g n/2 log(lambda_g / 2 pi)`` per chain, cached until ``lam`` is replaced
        (it changes only at a Gibbs step, the log prior is taken at every step)."""
        cached = self._cache.get(key)
        if cached is None or cached[0] is not lam:
            cached = (lam, (0.5 * n * (lam.log() - math.log(2 * math.pi))).sum(-1))
            self._cache[key] = cached
        return cached[1]

    def resample(self, params: Params, gen: torch.Generator) -> None:
        """Gibbs step: draw every group's precision from its conditional given ``params``
        (at ``temperature`` ``T``: given ``params / sqrt(T)``, see the class docstring).

        ``Gamma(a + n/2, 1)`` is drawn exactly as half a chi-square with ``2a + n``
        degrees of freedom (a sum of squared standard normals from ``gen``), which
        needs ``2 a`` to be an integer.
        """
        dof = 2.0 * self.shape
        if dof != int(dof):
            raise ValueError(f"shape must be a multiple of 1/2. Got {self.shape!r}.")
        for key, value in self._groups(params).items():
            value = value.detach()
            k = int(dof) + value.shape[2]
            z = torch.randn((*value.shape[:2], k), generator=gen, device=gen.device,
                            dtype=value.dtype).to(value.device)
            gamma = 0.5 * z.pow(2).sum(-1)
            sq = value.pow(2).sum(-1) / self.temperature
            self.precision[key] = gamma / (self.rate + 0.5 * sq)

    def check_scale(self, step_name: str = "step_size") -> None:
        """Raise :class:`~skfbnn.exceptions.SamplerDivergenceError` when a learned
        scale exceeds ``LEARNED_SCALE_LIMIT`` (or is NaN): the weights escaped."""
        largest = max((float(v.max()) for v in self.prior_std().values()), default=0.0)
        if not largest <= LEARNED_SCALE_LIMIT:  # also catches NaN
            raise divergence_error(
                step_name, f"the learned weight-prior scale reached {largest:.3g} (plausible "
                f"fits stay below {LEARNED_SCALE_LIMIT:g}), so the weights escaped")

    def prior_std(self) -> dict[str, Tensor]:
        """The current prior standard deviation ``lambda_g^{-1/2}`` per chain ``(C,)``, or
        per chain and input feature ``(C, d)`` for the first layer's weights with ``ard``."""
        return {k: v.rsqrt() if v.shape[1] > 1 else v[:, 0].rsqrt()
                for k, v in self.precision.items()}
