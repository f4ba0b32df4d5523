"""The one SparkSession of the test run, used only by the pipeline tests.

Session-scoped and local[1], so the JVM starts once, and only when a test in this folder asks
for it: the rest of the suite never imports pyspark. Built by lagReport's own ``build_session``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

_HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if _HERE in Path(str(item.fspath)).parents and "spark" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.spark)


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    pytest.importorskip("pyspark")
    pytest.importorskip("pyarrow")
    pytest.importorskip("pandas")
    from mqctl.pipeline.session import build_session

    # lagReport's own builder: with a local master its Python workers run this interpreter, so
    # the tests pass under `.venv/bin/python -m pytest` without an activated venv.
    session = build_session(
        "local[1]",
        driver_memory="512m",
        app_name="mqctl-tests",
        conf={
            "spark.sql.shuffle.partitions": "2",
            "spark.default.parallelism": "1",
            "spark.ui.enabled": "false",
        },
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
