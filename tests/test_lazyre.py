"""mqctl.lazyre: a pattern compiled on first use behaves as the compiled pattern, and every lazy
pattern in mqctl compiles (a typo would otherwise surface only when its command runs)."""

from __future__ import annotations

import importlib
import pkgutil
import re

import mqctl
from mqctl.lazyre import _LazyPattern, compile_now, lazy


def test_not_compiled_until_used_then_the_same_answers() -> None:
    p = lazy(r"(\d+)-(\w+)", re.ASCII)
    assert "match" not in vars(p)  # nothing compiled at definition
    c = re.compile(r"(\d+)-(\w+)", re.ASCII)
    text = "12-ab 7-x9 nothing 3-"
    assert p.findall(text) == c.findall(text) == [("12", "ab"), ("7", "x9")]
    assert p.sub(r"\2", text) == c.sub(r"\2", text)
    assert p.match(text).group(2) == "ab"  # type: ignore[union-attr]
    assert p.fullmatch("12-ab") is not None and p.search("zz") is None
    assert (p.pattern, p.flags, p.groups) == (c.pattern, c.flags, c.groups)
    assert "match" in vars(p)  # later calls go straight to the compiled pattern's methods


def test_compile_now_compiles_ahead_of_use() -> None:
    p, q = lazy(r"a+"), lazy(r"b+")
    compile_now(p, q)
    assert "match" in vars(p) and "match" in vars(q)
    assert p.fullmatch("aaa") is not None and q.fullmatch("a") is None


def test_a_bad_pattern_fails_when_used() -> None:
    p = lazy(r"(unclosed")
    try:
        p.match("x")
    except re.error:
        return
    raise AssertionError("an invalid pattern compiled")


def test_every_lazy_pattern_in_mqctl_compiles() -> None:
    found = 0
    for info in pkgutil.walk_packages(mqctl.__path__, "mqctl."):
        if info.name.startswith(("mqctl.pipeline", "mqctl.serve")):
            continue  # optional dependencies (pyspark, prometheus-client); no lazy pattern there
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if isinstance(value, _LazyPattern):
                assert value.groups >= 0, value  # compiles it
                found += 1
    assert found >= 18  # fastjson's, the body decoders'
