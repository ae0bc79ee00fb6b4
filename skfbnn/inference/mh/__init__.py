"""Metropolis-Hastings samplers for wide networks: pCN, pCNL, MALA.

The target is the posterior of an NTK-parameterised network (an MLP, or any
``nn.Sequential`` ending in ``nn.Linear``: :mod:`.body`) with a Gaussian
likelihood, optionally in the data-dependent coordinates of Hron et al. (2022),
in which it tends to the reference measure ``N(0, I)`` as the width grows
(:mod:`.reparam`, :mod:`.target`). The kernels share one accept/reject step
(:mod:`.kernel`) and differ only in their proposal.
"""
