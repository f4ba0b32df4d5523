"""mqctl.records against the standard library: the same class written with ``@dataclass`` and with
``@record`` must behave the same for everything mqctl uses (the stdlib is the independent truth)."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from typing import ClassVar

import pytest

from mqctl.records import FrozenRecordError, field, record, replace


def _both(frozen: bool, slots: bool) -> tuple[type, type]:
    """Point(x, y, tags=[], note=None, secret='s', weight=1.0) written both ways."""

    @dataclasses.dataclass(frozen=frozen, slots=slots)
    class Point:
        LIMIT: ClassVar[int] = 10
        x: int
        y: str
        tags: list[str] = dataclasses.field(default_factory=list)
        note: str | None = dataclasses.field(default=None, compare=False)
        secret: str = dataclasses.field(default="s", repr=False)
        weight: float = dataclasses.field(default=1.0, hash=False)

    std = Point

    @record(frozen=frozen, slots=slots)
    class Point:  # type: ignore[no-redef]
        LIMIT: ClassVar[int] = 10
        x: int
        y: str
        tags: list[str] = field(default_factory=list)
        note: str | None = field(default=None, compare=False)
        secret: str = field(default="s", repr=False)
        weight: float = field(default=1.0, hash=False)

    return std, Point


FLAVOURS = [(True, True), (True, False), (False, True), (False, False)]


@pytest.mark.parametrize(("frozen", "slots"), FLAVOURS)
def test_init_repr_eq_as_dataclasses(frozen: bool, slots: bool) -> None:
    std, rec = _both(frozen, slots)
    for args, kwargs in [
        ((1, "a"), {}),
        ((2, "b"), {"tags": ["t"], "note": "n", "secret": "k", "weight": 2.5}),
    ]:
        a, b = std(*args, **kwargs), rec(*args, **kwargs)
        assert repr(a) == repr(b)
        assert "secret" not in repr(b)
        assert [getattr(a, n) for n in ("x", "y", "tags", "note", "secret", "weight")] == [
            getattr(b, n) for n in ("x", "y", "tags", "note", "secret", "weight")
        ]
        assert b == rec(*args, **kwargs)
    assert rec(1, "a", note="one") == rec(1, "a", note="other")  # compare=False
    assert rec(1, "a") != rec(1, "a", weight=2.0)  # hash=False still compares
    assert rec(1, "a") != std(1, "a")  # another class is never equal
    assert rec(1, "a").tags is not rec(1, "a").tags  # a new list per instance
    assert rec.__match_args__ == std.__match_args__
    assert rec.LIMIT == 10 and "LIMIT" not in rec.__match_args__
    if not slots:  # plain defaults stay class attributes (with slots, both hold descriptors)
        assert rec.weight == std.weight == 1.0
    assert hasattr(rec(1, "a"), "__dict__") is (not slots)


@pytest.mark.parametrize("slots", [True, False])
def test_frozen_hash_and_refused_assignment(slots: bool) -> None:
    std, rec = _both(True, slots)
    # the same hash as the dataclass: set and dict orders built from these objects stay as they were
    assert hash(rec(1, "a", (), weight=3.0)) == hash(std(1, "a", (), weight=3.0)) == hash(rec(1, "a", ()))
    p = rec(1, "a")
    with pytest.raises(FrozenRecordError) as caught:
        p.x = 2
    assert isinstance(caught.value, AttributeError)
    with pytest.raises(AttributeError):
        del p.y
    assert p.x == 1


@pytest.mark.parametrize("slots", [True, False])
def test_mutable_is_unhashable_and_assignable(slots: bool) -> None:
    std, rec = _both(False, slots)
    p = rec(1, "a")
    p.x = 5
    assert p == rec(5, "a")
    with pytest.raises(TypeError):
        hash(p)
    with pytest.raises(TypeError):
        hash(std(1, "a"))


@pytest.mark.parametrize(("frozen", "slots"), FLAVOURS)
def test_pickle_and_copy_round_trip(frozen: bool, slots: bool) -> None:
    _std, rec = _both(frozen, slots)
    globals()["Point"] = rec  # pickle finds a class by its module and name
    rec.__qualname__ = "Point"
    try:
        p = rec(3, "c", tags=["x"], note="n", secret="k", weight=0.5)
        for q in (pickle.loads(pickle.dumps(p)), copy.copy(p), copy.deepcopy(p)):
            assert q == p and q.note == "n" and q.secret == "k" and q is not p
    finally:
        del globals()["Point"]


def test_post_init_runs_on_new_objects_and_on_replace() -> None:
    @record(frozen=True, slots=True)
    class Span:
        start: int
        end: int

        def __post_init__(self) -> None:
            if self.end < self.start:
                raise ValueError("end before start")

    s = Span(1, 5)
    assert replace(s, end=9) == Span(1, 9)
    assert replace(s) == s and replace(s) is not s
    with pytest.raises(ValueError, match="end before start"):
        replace(s, end=0)
    with pytest.raises(TypeError):
        replace(s, length=3)
    with pytest.raises(ValueError):
        Span(3, 2)


def test_replace_matches_dataclasses_replace() -> None:
    std, rec = _both(True, True)
    a = dataclasses.replace(std(1, "a", note="n"), y="z", weight=4.0)
    b = replace(rec(1, "a", note="n"), y="z", weight=4.0)
    assert repr(a) == repr(b) and b.note == "n"


def test_mistakes_are_refused_when_the_class_is_made() -> None:
    with pytest.raises(TypeError, match="non-default field 'b' follows a default field"):

        @record
        class Bad:
            a: int = 0
            b: int

    @record
    class Base:
        a: int

    with pytest.raises(TypeError, match="cannot inherit"):

        @record
        class Child(Base):
            b: int

    with pytest.raises(ValueError):
        field(default=1, default_factory=list)


def test_a_record_defined_in_a_function_keeps_its_qualified_name() -> None:
    @record(frozen=True, slots=True)
    class Inner:
        a: int

    assert Inner.__qualname__.endswith("<locals>.Inner")
    assert repr(Inner(1)).endswith("<locals>.Inner(a=1)")


def test_trusted_builds_the_record_without_init() -> None:
    """``trusted`` skips __init__ and __post_init__ (a decoder's fast path): the object is the
    one the constructor makes from the same values, slotted or not, and stays frozen."""
    from mqctl.records import trusted

    calls = []

    @record(frozen=True)
    class Plain:
        a: int
        b: str = "x"

        def __post_init__(self) -> None:
            calls.append(self.a)

    @record(frozen=True, slots=True)
    class Slotted:
        a: int
        b: str = "x"

    for cls in (Plain, Slotted):
        made, fast = cls(1, "y"), trusted(cls, {"a": 1, "b": "y"})
        assert fast == made and hash(fast) == hash(made) and repr(fast) == repr(made)
        with pytest.raises(FrozenRecordError):
            fast.a = 2  # type: ignore[misc]
    assert calls == [1]  # the constructor's only
