"""The version of the interface generated code imports (:mod:`sengen.runtime.abi`).

Kept apart from ``abi`` so that the generator reads it without loading the object layer: a
no-op rebuild compares it with the manifest and needs nothing else of the runtime.
"""

from __future__ import annotations

# Goes up whenever a name of abi is removed or changes meaning (codegen.md, "What a module
# starts with"). 2: declarative classes (issue 29).
INTERFACE = 2
