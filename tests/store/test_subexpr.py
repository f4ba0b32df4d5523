"""parse_subexpr: FilterAPI.buildSubscriptionData semantics."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mqctl.errors import UsageError
from mqctl.model import SubExpr, parse_subexpr


@pytest.mark.parametrize("expr", ["*", "", "   ", "\t"])
def test_all(expr: str) -> None:
    sub = parse_subexpr(expr)
    assert sub.match_all
    assert sub.tags == frozenset()
    assert sub.hashes == frozenset()
    assert sub.matches("anything")
    assert sub.matches(None)


def test_split_trim_and_hashes() -> None:
    sub = parse_subexpr(" TagA ||TagB||  || TagA")
    assert not sub.match_all
    assert sub.tags == frozenset({"TagA", "TagB"})
    # hashCode values from spec 7.
    assert sub.hashes == frozenset({2598919, 2598920})


def test_single_tag() -> None:
    sub = parse_subexpr("订单")
    assert sub.tags == frozenset({"订单"})
    assert sub.hashes == frozenset({1129459})


def test_triple_pipe_splits_leftmost_like_java() -> None:
    # Java's "a|||b".split("\\|\\|") gives ["a", "|b"].
    assert parse_subexpr("a|||b").tags == frozenset({"a", "|b"})


def test_star_with_spaces_is_literal_tag_as_in_java() -> None:
    sub = parse_subexpr(" * ")
    assert not sub.match_all
    assert sub.tags == frozenset({"*"})
    assert sub.hashes == frozenset({42})


def test_matches() -> None:
    sub = parse_subexpr("TagA || TagB")
    assert sub.matches("TagA")
    assert sub.matches("TagB")
    assert not sub.matches("TagC")
    assert not sub.matches(None)
    assert not sub.matches("")
    # The whole TAGS string is compared, not split.
    assert not sub.matches("TagA||TagB")


def test_collision_is_not_a_match() -> None:
    sub = parse_subexpr("Aa")
    assert sub.hashes == frozenset({2112})
    assert not sub.matches("BB")


@pytest.mark.parametrize("expr", ["||", " || ", "|| ||", "||||"])
def test_no_tags_is_usage_error(expr: str) -> None:
    with pytest.raises(UsageError):
        parse_subexpr(expr)


def test_frozen() -> None:
    sub = parse_subexpr("A")
    with pytest.raises(AttributeError):
        sub.match_all = True  # type: ignore[misc]
    assert sub == SubExpr(False, frozenset({"A"}))


@given(st.text())
def test_random_input_only_usage_error(expr: str) -> None:
    try:
        sub = parse_subexpr(expr)
    except UsageError:
        return
    assert sub.match_all or sub.tags
    assert all(t == t.strip("".join(map(chr, range(33)))) and t for t in sub.tags)
