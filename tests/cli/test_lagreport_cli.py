"""lagReport without a JVM: pyspark stays out of the CLI's imports; a missing extra is one line, exit 7."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("pyspark", "pandas", "pyarrow", "py4j")


def test_cli_imports_never_load_spark() -> None:
    code = (
        "import sys, mqctl.cli.app, mqctl.cli.lagreport, mqctl.pipeline.inputs, mqctl.pipeline.kernel\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r})))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_missing_extra_is_one_line_and_exit_7(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import typer
    from typer.testing import CliRunner

    from mqctl.cli.lagreport import lag_report

    # None in sys.modules makes `import pyspark` fail exactly as when the extra is not installed.
    for name in ("pyspark", "pyspark.sql", "mqctl.pipeline.spark_job", "mqctl.pipeline.spark_schemas"):
        monkeypatch.setitem(sys.modules, name, None)
    import mqctl.pipeline

    # A package attribute left by an earlier import would bypass sys.modules.
    monkeypatch.delattr(mqctl.pipeline, "spark_job", raising=False)
    app = typer.Typer()
    app.command("lagReport")(lag_report)
    app.command("other")(lambda: None)
    res = CliRunner().invoke(app, ["lagReport", "-S", f"b={tmp_path}"])
    assert res.exit_code == 7
    assert res.stdout == ""
    lines = res.stderr.splitlines()
    assert lines[0].startswith("mqctl: error: lagReport needs Apache Spark")
    assert lines[1] == "hint: pip install 'mqctl[spark]' (pyspark 4, pandas, pyarrow; Spark needs Java 17+)"
    assert len(lines) == 2


def test_no_store_is_a_usage_error() -> None:
    import typer
    from typer.testing import CliRunner

    from mqctl.cli.lagreport import lag_report

    app = typer.Typer()
    app.command("lagReport")(lag_report)
    app.command("other")(lambda: None)
    res = CliRunner().invoke(app, ["lagReport"])
    assert res.exit_code == 2
    assert "at least one --store" in res.stderr


def test_subscriptions_file_errors(tmp_path: Path) -> None:
    from mqctl.errors import UsageError
    from mqctl.pipeline.inputs import load_subscriptions

    good = tmp_path / "s.json"
    good.write_text('{"g": {"T": "TagA || TagB", "U": "*"}}')
    subs = load_subscriptions(good)
    assert subs["g"]["T"].hashes == frozenset({2598919, 2598920}) and subs["g"]["U"].match_all
    for name, text in (
        ("bad.json", "{"),
        ("bad.toml", "[g\n"),
        ("flat.json", '{"g": "TagA"}'),
        ("num.json", '{"g": {"T": 1}}'),
    ):
        p = tmp_path / name
        p.write_text(text)
        with pytest.raises(UsageError):
            load_subscriptions(p)
    with pytest.raises(UsageError):
        load_subscriptions(tmp_path / "missing.json")
