"""The Mushroom bandit's environment: rewards, the agents' inputs, and the loop that runs a
policy over a stream of mushrooms (:func:`run_bandit`).

At every step a mushroom is drawn uniformly at random from the 8124 rows; the agent sees its
117 one-hot features and eats it or rejects it. Eating an edible mushroom gives +5; eating a
poisonous one -35 with probability ``p`` and +5 otherwise; rejecting gives 0. The oracle eats
exactly the edible mushrooms (+5 or 0), and the regret of a step is the oracle's reward minus
the agent's (``regret``; ``expected_regret`` replaces the agent's reward by its expectation
given the mushroom, which removes the coin's noise). The draws of mushrooms and coins depend
only on the seed, so every method of a seed meets the same sequence.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

__all__ = ["EAT", "REJECT", "mushroom_rewards", "expected_rewards", "oracle_rewards",
           "encode_actions", "inputs_of", "check_run", "run_bandit"]

EAT, REJECT = 1, 0


def mushroom_rewards(edible: np.ndarray, actions: np.ndarray, unlucky: np.ndarray) -> np.ndarray:
    """Rewards of ``actions`` (1 eat, 0 reject) on mushrooms of class ``edible`` (bool);
    ``unlucky`` (bool) says whether eating a poisonous one costs -35 rather than +5.

    Examples
    --------
    >>> mushroom_rewards(np.array([1, 0, 0, 0]), np.array([1, 1, 1, 0]),
    ...                  np.array([1, 1, 0, 1])).tolist()
    [5.0, -35.0, 5.0, 0.0]
    """
    edible, unlucky = np.asarray(edible, bool), np.asarray(unlucky, bool)
    eat = np.where(edible, 5.0, np.where(unlucky, -35.0, 5.0))
    return np.where(np.asarray(actions) == EAT, eat, 0.0)


def expected_rewards(edible: np.ndarray, actions: np.ndarray, p: float) -> np.ndarray:
    """Expected reward of ``actions`` given the mushrooms' classes: eating a poisonous one
    is worth ``-35 p + 5 (1 - p)``.

    Examples
    --------
    >>> expected_rewards(np.array([1, 0, 0]), np.array([1, 1, 0]), 0.5).tolist()
    [5.0, -15.0, 0.0]
    """
    edible = np.asarray(edible, bool)
    eat = np.where(edible, 5.0, -35.0 * p + 5.0 * (1.0 - p))
    return np.where(np.asarray(actions) == EAT, eat, 0.0)


def oracle_rewards(edible: np.ndarray) -> np.ndarray:
    """The oracle's rewards: +5 for an edible mushroom (eaten), 0 for a poisonous one."""
    return np.where(np.asarray(edible, bool), 5.0, 0.0)


def encode_actions(contexts: np.ndarray) -> np.ndarray:
    """Every context with each action appended one-hot: rows ``2 i + a``."""
    m = len(contexts)
    X = np.repeat(contexts, 2, axis=0)
    actions = np.tile(np.eye(2), (m, 1))
    return np.hstack([X, actions])


def inputs_of(contexts: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """The contexts with the actions taken appended one-hot: what an agent learns from."""
    return np.hstack([contexts, np.eye(2)[np.asarray(actions, int)]])


# ----------------------------------------------------------------- the loop
def check_run(p: float, **counts: int) -> None:
    """Refuse a run's settings that are not positive ints (``counts``) or a ``p`` outside
    [0, 1], with a ValueError naming the setting."""
    for name, value in counts.items():
        if not (isinstance(value, (int, np.integer)) and value >= 1):
            raise ValueError(f"{name} must be a positive int. Got {value!r}.")
    if not (isinstance(p, (int, float, np.number)) and 0 <= p <= 1):
        raise ValueError(f"p must lie in [0, 1]. Got {p!r}.")


def run_bandit(policy, contexts: np.ndarray, edible: np.ndarray, *, horizon: int,
               p: float = 0.5, seed: int = 0, buffer_size: int = 4096,
               update_every: int = 64, curve_every: int = 64) -> dict[str, Any]:
    """Run ``policy`` for ``horizon`` steps on the mushrooms ``contexts`` / ``edible``.

    ``policy`` has ``act(contexts, rng, edible)``, ``update(X, y, rng)`` and a count
    ``failed_updates``, as :class:`~skfbnn.bench.bandit_policies.UniformPolicy` and its
    subclasses do.

    Returns
    -------
    result : dict
        ``regret``, ``expected_regret``, ``reward``, ``oracle_reward`` (totals),
        ``eaten``, ``poisonous_eaten``, ``fit_time`` (seconds in ``update``),
        ``n_updates``, ``failed_updates`` (the policy's updates whose fit failed),
        ``curve``: ``(step, cumulative regret, cumulative expected regret)`` every
        ``curve_every`` steps and at the end, and ``actions`` (one per step).
    """
    check_run(horizon=horizon, buffer_size=buffer_size, update_every=update_every,
               curve_every=curve_every, p=p)
    env = np.random.default_rng([seed, 0])  # the same for every method of a seed
    rows = env.integers(0, len(contexts), size=horizon)
    unlucky = env.random(horizon) < p
    agent = np.random.default_rng([seed, 1])
    edible = np.asarray(edible, bool)
    actions = np.empty(horizon, dtype=int)
    rewards = np.empty(horizon)
    buf_X = np.empty((0, contexts.shape[1] + 2))
    buf_y = np.empty(0)
    fit_time, n_updates = 0.0, 0
    for start in range(0, horizon, update_every):
        block = slice(start, min(start + update_every, horizon))
        ctx, ed = contexts[rows[block]], edible[rows[block]]
        a = np.asarray(policy.act(ctx, agent, edible=ed), dtype=int)
        actions[block] = a
        rewards[block] = mushroom_rewards(ed, a, unlucky[block])
        buf_X = np.vstack([buf_X, inputs_of(ctx, a)])[-buffer_size:]
        buf_y = np.concatenate([buf_y, rewards[block]])[-buffer_size:]
        if block.stop < horizon:
            tic = time.perf_counter()
            policy.update(buf_X, buf_y, agent)
            fit_time += time.perf_counter() - tic
            n_updates += 1
    ed_all = edible[rows]
    oracle = oracle_rewards(ed_all)
    regret = np.cumsum(oracle - rewards)
    expected = np.cumsum(oracle - expected_rewards(ed_all, actions, p))
    steps = sorted({*range(curve_every, horizon + 1, curve_every), horizon})
    return {
        "regret": float(regret[-1]), "expected_regret": float(expected[-1]),
        "reward": float(rewards.sum()), "oracle_reward": float(oracle.sum()),
        "eaten": int(np.sum(actions == EAT)),
        "poisonous_eaten": int(np.sum((actions == EAT) & ~ed_all)),
        "fit_time": fit_time, "n_updates": n_updates, "failed_updates": policy.failed_updates,
        "curve": [(s, float(regret[s - 1]), float(expected[s - 1])) for s in steps],
        "actions": actions,
    }
