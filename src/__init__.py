"""agones-py: a Python port of Agones, dedicated game-server hosting and scaling on Kubernetes.

The import package is `agones`; its source root is `src/`. See docs/design.md for the module map.
"""

from .version import VERSION

__all__ = ["VERSION"]
