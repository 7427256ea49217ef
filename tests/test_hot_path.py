"""The owner's write and commit hot path (issue 28): ``set_next_<s>`` specialised per property,
the single pending write flipped by the context's commit without a call, STL equality tested in
C where ``==`` decides. These pin what the shortcuts must keep: which Prop a write is keyed by,
the change detection of every kind of type, the seqlock and the change records."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import pytest
from objects_support import Tree, cycle, imported_tree

from sengen.runtime.objects import values
from sengen.runtime.objects.checks import set_checks
from sengen.runtime.objects.context import Context

ROOT = "objgen_hot_path"
BUS = "local.bus"
MS = 1_000_000


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tree]:
    with imported_tree(tmp_path_factory.mktemp("hot_path"), ROOT) as generated:
        yield generated


def registered_gauge(tree: Tree, context: Context) -> Any:
    gauge = tree.devices.GaugeBase("g", serial="S-1", gain=0.5)
    gauge.set_tag_id(7)
    gauge.set_slot(3)
    gauge._bind_(context, BUS, 0)
    return gauge


def test_an_inherited_setter_writes_the_prop_of_the_objects_class(tree: Tree) -> None:
    owner = Context("owner")
    owner.track_changes = True
    gauge = registered_gauge(tree, owner)
    prop = type(gauge)._PROPS["level"]
    # Declared by Device: one Prop for every view of the owner that inherits its slot.
    assert prop is tree.devices.DeviceBase._PROPS["level"]
    assert type(gauge).set_next_level is tree.devices.DeviceBase.set_next_level
    cycle(owner, 1 * MS, update=lambda: gauge.set_next_level(5))
    assert owner.changed == [gauge]
    assert owner.changed_props[0] is prop.alone
    owner.changed.clear()
    owner.changed_props.clear()
    cycle(owner, 2 * MS, update=lambda: gauge._set_next("level", 6))  # by name, as a replay
    assert gauge.level == 6
    assert owner.changed == [gauge]


def test_the_generated_setter_is_named_and_documented(tree: Tree) -> None:
    setter = tree.devices.GaugeBase.set_next_reading
    assert setter.__name__ == "set_next_reading"
    assert setter.__doc__ is not None and "reading" in setter.__doc__
    assert setter.__annotations__ == {"value": "f64"}


def _changes(tree: Tree, name: str, first: Any, second: Any) -> bool:
    """Whether committing ``second`` after ``first`` changes property ``name``."""
    owner = Context("owner")
    gauge = registered_gauge(tree, owner)
    cycle(owner, 1 * MS, update=lambda: getattr(gauge, f"set_next_{name}")(first))
    version = list(gauge._version_)  # [sequence, last commit time]
    cycle(owner, 2 * MS, update=lambda: getattr(gauge, f"set_next_{name}")(second))
    changed: bool = gauge._version_ != version
    assert gauge._version_[0] % 2 == 0  # the seqlock is never left odd
    assert gauge._version_[0] == version[0] + (2 if changed else 0)
    assert gauge.last_commit_time == (2 * MS if changed else version[1])
    return changed


@pytest.mark.parametrize(
    ("name", "first", "second", "changed"),
    [
        ("reading", 1.0, 2.0, True),
        ("reading", 1.5, 1.5, False),
        ("reading", math.nan, math.nan, False),
        ("reading", math.nan, 1.0, True),
        ("reading", 1.0, math.nan, True),
        ("reading", 0.0, -0.0, False),
        ("reading", 1.0, 1, False),
        ("level", 3, 3, False),
        ("level", 3, 4, True),
        ("type", "a", "a", False),
        ("type", "a", "b", True),
        ("altitude", math.nan, math.nan, False),  # a quantity of f32
        # Distinct NaNs: ``==`` of tuples would pass one NaN as equal to itself.
        ("samples", (float("nan"), 1.0), (float("nan"), 1.0), False),
        ("samples", (float("nan"), 1.0), (float("nan"), 2.0), True),
    ],
)
def test_a_single_pending_write_changes_by_stl_equality(
    tree: Tree, name: str, first: Any, second: Any, changed: bool
) -> None:
    assert _changes(tree, name, first, second) is changed


def test_a_struct_with_floats_changes_by_stl_equality(tree: Tree) -> None:
    t = tree.types

    def spot(x: float) -> Any:
        return t.Spot(t.Point3(x, 0.0, 0.0), 1.0, 6)

    assert not _changes(tree, "spot", spot(float("nan")), spot(float("nan")))
    assert _changes(tree, "spot", spot(1.0), spot(2.0))


def test_two_pending_writes_of_one_object_commit_together(tree: Tree) -> None:
    owner = Context("owner")
    owner.track_changes = True
    gauge = registered_gauge(tree, owner)

    def update() -> None:
        gauge.set_next_a(1)
        gauge.set_next_b(2)

    cycle(owner, 1 * MS, update=update)
    props = type(gauge)._PROPS
    assert (owner.changed, owner.changed_props) == ([gauge], [[props["a"], props["b"]]])
    assert gauge._version_ == [2, 1 * MS]


def test_the_class_alone_passes_only_where_the_check_looks_at_nothing_else(tree: Tree) -> None:
    meta = tree.devices.GaugeBase.META
    kinds = {p.stl_name: values.passing_classes(p.type) for p in meta.all_properties}
    assert kinds["reading"] == (float, int)
    assert kinds["flag"] == (bool,)
    assert kinds["mode"] == (tree.types.Mode,)
    assert kinds["gain"] == kinds["level"] == kinds["type"] == kinds["spot"] == ()
    owner = Context("owner")
    gauge = registered_gauge(tree, owner)
    with owner.active():
        with pytest.raises(ValueError, match="expected f64"):
            gauge.set_next_reading("1.0")
        with pytest.raises(ValueError, match="expected bool"):
            gauge.set_next_flag(1)
        set_checks(False)
        try:
            gauge.set_next_reading("1.0")  # unchecked while checks are off
        finally:
            set_checks(True)
        assert gauge.get_next_reading() == "1.0"
