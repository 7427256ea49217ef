"""The pytest plugin of sengen (entry point ``pytest11: sengen``): the ``test_kernel`` fixture."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest

from sengen.testing import TestKernel


@pytest.fixture
def test_kernel() -> Iterator[Callable[..., TestKernel]]:
    """A factory of test kernels, ``test_kernel(yaml_text, components=...)``, every one closed
    when the test ends."""
    made: list[TestKernel] = []

    def make(yaml_text: str = "", components: Sequence[Any] = ()) -> TestKernel:
        kernel = TestKernel.from_yaml(yaml_text, components)
        made.append(kernel)
        return kernel

    try:
        yield make
    finally:
        for kernel in made:
            kernel.close()
