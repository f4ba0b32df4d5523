"""lagReport without a JVM: pyspark stays out of the CLI's imports; a missing extra is one line, exit 7."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("pyspark", "pandas", "pyarrow", "py4j")


def test_cli_imports_never_load_spark() -> None:
    code = (
        "import sys, mqctl.cli.app, mqctl.cli.lagreport, mqctl.pipeline.lagreport, mqctl.render.lagreport\n"
        "import mqctl.pipeline.inputs, mqctl.pipeline.lagreport_run, mqctl.store.scan\n"
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


def _app() -> object:
    import typer

    from mqctl.cli.lagreport import lag_report

    app = typer.Typer()
    app.command("lagReport")(lag_report)
    app.command("other")(lambda: None)
    return app


def test_no_cluster_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    monkeypatch.delenv("NAMESRV_ADDR", raising=False)
    monkeypatch.delenv("MQCTL_PROFILE", raising=False)
    monkeypatch.setenv("MQCTL_CONFIG", "/dev/null")
    res = CliRunner().invoke(_app(), ["lagReport"])  # type: ignore[arg-type]
    assert res.exit_code == 2
    assert "no cluster given" in res.stderr and "--store NAME=PATH" in res.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--status"], "--status needs --history DIR"),
        (["--status", "--history", "h", "-n", "127.0.0.1:9876"], "--status reads only the --history"),
        (["--status", "--history", "h", "--window", "soon"], "malformed duration"),
        (["-n", "127.0.0.1:1", "--subscriptions", "s.json"], "--subscriptions needs stores"),
        (["--top", "-1", "-S", "b=/x"], "--top must be >= 0"),
    ],
)
def test_flag_errors(args: list[str], message: str) -> None:
    from typer.testing import CliRunner

    res = CliRunner().invoke(_app(), ["lagReport", *args])  # type: ignore[arg-type]
    assert res.exit_code == 2, res.stderr
    assert message in res.stderr and "Traceback" not in res.stderr


def test_auto_cq_read_picks_direct_for_paths_the_driver_sees(tmp_path: Path) -> None:
    from mqctl.pipeline.inputs import local_path
    from mqctl.pipeline.lagreport import _on_driver

    assert local_path("file:///data/store") == "/data/store" and local_path("file:/data") == "/data"
    assert local_path("/data/store") == "/data/store" and local_path("store") == "store"
    assert local_path("hdfs://nn:8020/store") is None and local_path("s3a://bucket/store") is None
    assert _on_driver(tmp_path) and _on_driver(Path(f"file:{tmp_path}"))
    assert not _on_driver(tmp_path / "missing") and not _on_driver(Path("hdfs://nn/store"))


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


def test_table_durations_are_consumer_progress_s() -> None:
    """#Max Lag uses the shared format_duration_ms (consumerProgress's Max Lag Time); 0 is '-'."""
    import io

    from mqctl.model import LagReportSummary
    from mqctl.render.lagreport import report_table

    def top(group: str, lag: int | None) -> dict[str, object]:
        return {"group": group, "diffTotal": 5, "matchedDiffTotal": None, "maxLagMs": lag,
                "queues": 1, "queuesBelowMin": 0, "queuesAboveMax": 0}  # fmt: skip

    lags = {"none": 0, "ms": 850, "s": 12_345, "m": 307_000, "h": 11_040_000, "d": 93_600_000}
    buf = io.StringIO()
    summary = LagReportSummary(7, "store", 0, None, "parquet", None, [top(g, ms) for g, ms in lags.items()])
    report_table(summary, buf)
    # Group, Diff Total, Max Lag (no Matched column: no group has one)
    cells = {ln.split()[0]: ln.split()[2] for ln in buf.getvalue().splitlines()[1:] if ln.split()[0] in lags}
    assert cells == {"none": "-", "ms": "850ms", "s": "12.3s", "m": "5m07s", "h": "3h04m", "d": "1d2h"}
    assert buf.getvalue().rstrip().endswith("7 queue rows")
