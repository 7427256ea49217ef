"""Parsing one configuration file's YAML with bounded time and memory (runtime.md §1.1 step 3).

PyYAML builds aliases as shared references, but the provenance tree and the merged
configuration copy them, so a kilobyte of nested aliases ("billion laughs") would expand to
gigabytes; a recursive alias would never end; and PyYAML's composer recurses once per nesting
level. So, before anything is built, one pass over PyYAML's event stream (its parser is a state
machine, not recursive) bounds the nesting depth and the size of the document with every alias
expanded, and refuses an alias inside its own anchor, each at the position where the limit is
crossed. Duplicate keys, which PyYAML accepts with the last one winning, are refused with their
position: in a configuration the first value would be silently lost.
"""

from __future__ import annotations

from typing import Any, Final

import yaml
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode, Node, ScalarNode

# Far beyond any configuration (the specification's own examples nest 6 levels deep), far below
# Python's recursion limit for the composer and the merge.
MAX_DEPTH: Final = 100
# Values (scalars and collections) with every alias expanded: a configuration of a thousand
# objects has tens of thousands, and a million builds in about a second.
MAX_VALUES: Final = 1_000_000
_MERGE_TAG: Final = "tag:yaml.org,2002:merge"


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing duplicate keys in a map."""

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        # Keys brought in by a ``<<`` merge may be overridden: only the map's own keys count.
        seen: set[object] = set()
        for key_node, _ in node.value:
            if not isinstance(key_node, ScalarNode) or key_node.tag == _MERGE_TAG:
                continue
            key = self.construct_object(key_node)
            if key in seen:
                raise ConstructorError(None, None, f"duplicate key '{key}'", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep)


def _refuse(problem: str, mark: Any) -> ConstructorError:
    return ConstructorError(None, None, problem, mark)


def _check_events(text: str) -> None:
    """Raise a marked YAML error for a document nested too deeply, too large once its aliases
    are expanded, or holding a recursive alias."""
    # Per open collection: the expanded count before it started, and its anchor.
    stack: list[tuple[int, str | None]] = []
    sizes: dict[str, int] = {}
    total = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, yaml.CollectionStartEvent):
            if len(stack) >= MAX_DEPTH:
                raise _refuse(f"nested more than {MAX_DEPTH} levels deep", event.start_mark)
            stack.append((total, event.anchor))
            total += 1
        elif isinstance(event, yaml.CollectionEndEvent):
            before, anchor = stack.pop()
            if anchor is not None:
                sizes[anchor] = total - before
            continue
        elif isinstance(event, yaml.ScalarEvent):
            if event.anchor is not None:
                sizes[event.anchor] = 1
            total += 1
        elif isinstance(event, yaml.AliasEvent):
            if any(anchor == event.anchor for _, anchor in stack):
                raise _refuse(f"recursive alias '*{event.anchor}'", event.start_mark)
            total += sizes.get(event.anchor or "", 0)  # an unknown anchor: the composer says so
        else:
            continue
        if total > MAX_VALUES:
            raise _refuse(
                f"more than {MAX_VALUES:,} values once aliases are expanded", event.start_mark
            )


def parse_yaml(text: str) -> object:
    """The data of one YAML document (``None`` when empty); :class:`yaml.YAMLError` (marked
    where possible) for a syntax error or one of the refusals above."""
    _check_events(text)
    loader = _Loader(text)
    try:
        node: Node | None = loader.get_single_node()
        return None if node is None else loader.construct_document(node)
    finally:
        loader.dispose()
