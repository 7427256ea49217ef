"""sengen.runtime: the object layer and kernel that generated code plugs into.

Generated modules import it as ``from sengen import runtime as _rt``.
"""

from sengen.runtime.duration import Duration, TimeStamp, TimeValueError

__all__ = ["Duration", "TimeStamp", "TimeValueError"]
