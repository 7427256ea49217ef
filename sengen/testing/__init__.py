"""sengen.testing: the test kernel, for pytest (runtime.md §10.1). The plugin in
:mod:`sengen.testing.pytest_plugin` adds the ``test_kernel`` fixture."""

from sengen.testing.kernel import TestKernel

__all__ = ["TestKernel"]
