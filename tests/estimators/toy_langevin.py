"""A toy inference method, the one file a new method needs: plain (unpreconditioned)
Langevin steps. ``test_toy_method.py`` registers it with one registry entry."""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

import torch
from torch import Tensor

from skfbnn.inference.objective import grad_and_value, make_log_posterior
from skfbnn.inference.sgmcmc.diffusions import noises_like, step_size_param
from skfbnn.inference.types import BayesProblem, Transform

HYPER = (step_size_param(0.02),)


class State(NamedTuple):
    params: dict
    log_post: Tensor
    step: int


class Info(NamedTuple):
    log_post: Tensor


def init(params, batch=None, gen=None) -> State:
    n_chains = next(iter(params.values())).shape[0]
    return State(params, torch.full((n_chains,), float("nan")), 0)


def update(state: State, batch, gen, *, log_posterior, step_size, temperature):
    grads, log_post = grad_and_value(log_posterior, state.params, batch)
    eps = step_size(state.step)
    noise = noises_like(state.params, gen)
    params = {k: p + eps * grads[k] + (2.0 * eps * temperature) ** 0.5 * noise[k]
              for k, p in state.params.items()}
    return State(params, log_post, state.step + 1), Info(log_post)


def build(problem: BayesProblem, *, step_size, temperature: float = 1.0,
          n_burnin: int = 0) -> Transform:
    return Transform(init, partial(update, log_posterior=make_log_posterior(problem),
                                   step_size=step_size, temperature=temperature))
