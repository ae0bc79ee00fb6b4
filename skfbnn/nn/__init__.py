"""Network architecture and functional (parameter-dict) evaluation.

:mod:`skfbnn.nn.zoo` holds small networks to pass as ``network=`` (exported here).
"""

from .zoo import CNN1d, CNN2d, ResidualMLP

__all__ = ["CNN1d", "CNN2d", "ResidualMLP"]
