"""lagReport's Spark start-up helpers without a JVM: worker Python rule, log files, progress, errors."""

from __future__ import annotations

import io
import sys
import time
from pathlib import Path
from typing import NamedTuple

import pytest

pytest.importorskip("pyspark")

from mqctl.pipeline import session  # noqa: E402


class _Conf:
    def __init__(self, values: dict[str, str]) -> None:
        self._values = values

    def get(self, key: str, default: str | None = None) -> str | None:
        return self._values.get(key, default)


class _Context:
    """The few SparkContext members pin_worker_python reads and sets."""

    def __init__(self, master: str, conf: dict[str, str] | None = None) -> None:
        self.master = master
        self.pythonExec = "python3"  # pyspark's default without PYSPARK_PYTHON
        self._conf = _Conf(conf or {})

    def getConf(self) -> _Conf:  # noqa: N802 - pyspark's name
        return self._conf


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "PYSPARK_GATEWAY_PORT"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


@pytest.mark.parametrize(
    ("master", "local"),
    [
        (None, True),
        ("local", True),
        ("local[1]", True),
        ("local[*]", True),
        ("local[4,2]", True),
        ("yarn", False),
        ("spark://host:7077", False),
        ("local-cluster[2,1,1024]", False),
        ("k8s://https://host", False),
    ],
)
def test_is_local_master(master: str | None, local: bool) -> None:
    assert session.is_local_master(master) is local


def test_local_workers_run_this_interpreter(clean_env: pytest.MonkeyPatch) -> None:
    sc = _Context("local[*]")
    assert session.pin_worker_python(sc) == sys.executable  # type: ignore[arg-type]
    assert sc.pythonExec == sys.executable


def test_users_choice_of_worker_python_wins(clean_env: pytest.MonkeyPatch) -> None:
    # spark.pyspark.python (spark-defaults.conf, PYSPARK_SUBMIT_ARGS): pyspark alone ignores it.
    sc = _Context("local[2]", {"spark.pyspark.python": "/opt/py/bin/python"})
    assert session.pin_worker_python(sc) == "/opt/py/bin/python"  # type: ignore[arg-type]
    for name in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON"):
        clean_env.setenv(name, "/somewhere/python")
        sc = _Context("local[2]")
        assert session.pin_worker_python(sc) == "python3"  # type: ignore[arg-type]
        clean_env.delenv(name)


def test_cluster_and_spark_submit_are_left_alone(clean_env: pytest.MonkeyPatch) -> None:
    sc = _Context("yarn")
    assert session.pin_worker_python(sc) == "python3"  # type: ignore[arg-type]
    clean_env.setenv("PYSPARK_GATEWAY_PORT", "1")
    sc = _Context("local[*]")
    assert session.pin_worker_python(sc) == "python3"  # type: ignore[arg-type]
    assert not session.launches_jvm()


def test_log_files_go_under_xdg_state_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    d = tmp_path / "mqctl" / "spark"
    d.mkdir(parents=True)
    for i in range(30):  # older runs: only the newest few are kept
        (d / f"lagReport-20200101-0000{i:02d}-1.log").write_text("old")
    log = session.new_log_file()
    assert log.parent == d and log.name.startswith("lagReport-") and log.is_file()
    kept = sorted(p.name for p in d.glob("lagReport-*.log"))
    assert len(kept) == 20 and log.name in kept
    monkeypatch.setenv("XDG_STATE_HOME", "relative/dir")  # not absolute: ignored, as the spec says
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert session.new_log_file().parent == tmp_path / "home" / ".local" / "state" / "mqctl" / "spark"


def test_java_options_carry_the_log_config(tmp_path: Path, clean_env: pytest.MonkeyPatch) -> None:
    log = tmp_path / "with space" / "x.log"
    log.parent.mkdir()
    opts = session._options("local[1]", "512m", "t", log)
    java = opts["spark.driver.extraJavaOptions"]
    assert java.startswith("-XX:G1HeapRegionSize=32m ")
    config = tmp_path / "with space" / "log4j2-mqctl.properties"
    assert f'-Dlog4j2.configurationFile="{config}"' in java and f'-Dmqctl.sparkLog="{log}"' in java
    assert "${sys:mqctl.sparkLog}" in config.read_text()
    assert "-Dlog4j2" not in session._options("local[1]", "512m", "t", None)["spark.driver.extraJavaOptions"]


class _Stage(NamedTuple):
    stageId: int  # noqa: N815 - pyspark's SparkStageInfo
    numTasks: int  # noqa: N815
    numActiveTasks: int  # noqa: N815
    numCompletedTasks: int  # noqa: N815
    numFailedTasks: int  # noqa: N815


class _Tracker:
    def getActiveStageIds(self) -> list[int]:  # noqa: N802
        return [4]

    def getStageInfo(self, sid: int) -> _Stage:  # noqa: N802
        return _Stage(sid, 40, 2, 12, 0)


class _TrackedContext:
    def statusTracker(self) -> _Tracker:  # noqa: N802
        return _Tracker()


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_on_a_terminal_only() -> None:
    quiet = io.StringIO()
    with session.Progress(quiet, interval=0.01) as p:
        p.attach(_TrackedContext())
        p.phase("scanning")
    assert quiet.getvalue() == "" and not p.enabled

    tty = _Tty()
    with session.Progress(tty, interval=0.01) as p:
        p.attach(_TrackedContext())
        p.phase("scanning")
        assert p.line().startswith("lagReport: scanning | stage 4: 12/40 tasks, 2 running | 0:0")
        deadline = time.monotonic() + 10
        while "stage 4" not in tty.getvalue() and time.monotonic() < deadline:
            time.sleep(0.01)
    assert tty.getvalue().endswith("\r\x1b[K")  # the line is cleared before the result
    with session.Progress(_Tty(), enabled=False) as p:  # --verbose
        assert not p.enabled


PY_FAILURE = """[PYTHON_EXCEPTION] An exception was thrown from the Python worker: Traceback (most recent call last):
  File "/x/pyspark/worker.py", line 4207, in invoke_udf
    func, profiler, deserializer, serializer = read_udfs(
{last}
 SQLSTATE: 38000"""


def test_spark_failures_are_one_line() -> None:
    from mqctl.errors import MqctlError, StoreError

    e = session.job_error(RuntimeError(PY_FAILURE.format(last="ModuleNotFoundError: No module named 'mqctl'")),
                          "Spark's log: /l", "/usr/bin/python3")  # fmt: skip
    assert (
        isinstance(e, MqctlError)
        and e.message == "Spark job failed: ModuleNotFoundError: No module named 'mqctl'"
    )
    assert e.hint is not None and "/usr/bin/python3" in e.hint and e.hint.endswith("; Spark's log: /l")

    last = "mqctl.errors.StoreError: direct CQ reads need a local or mounted path, got hdfs://n/x"
    e = session.job_error(RuntimeError(PY_FAILURE.format(last=last)), None)
    assert type(e) is StoreError and e.message.startswith("direct CQ reads need")

    java = "An error occurred while calling o81.save.\n: org.apache.spark.SparkException: Job aborted.\n\tat x.y(z)"
    e = session.job_error(RuntimeError(java), "Spark's log: /l")
    assert isinstance(e, MqctlError)
    assert (e.message, e.hint) == (
        "Spark job failed: org.apache.spark.SparkException: Job aborted.",
        "Spark's log: /l",
    )
    assert "\n" not in e.message


def test_startup_failure_names_the_jvms_reason(tmp_path: Path) -> None:
    log = tmp_path / "x.log"
    log.write_text(
        "WARNING: Using incubator modules: jdk.incubator.vector\n"
        'Exception in thread "main" org.apache.spark.SparkException: Master must either be yarn or '
        "start with spark, k8s, or local\n\tat org.apache.spark.deploy.SparkSubmit.error(SparkSubmit.scala:1068)\n"
    )
    assert session.startup_failure(log) == (
        "org.apache.spark.SparkException: Master must either be yarn or start with spark, k8s, or local"
    )
    log.write_text("/v/pyspark/bin/spark-class: line 71: /nonexistent/bin/java: No such file or directory\n")
    assert session.startup_failure(log) == "/nonexistent/bin/java: No such file or directory"
    log.write_text(
        "26/11/23 12:42:00 WARN Utils: Set SPARK_LOCAL_IP if you need to bind to another address\n"
    )
    assert session.startup_failure(log) is None
    assert session.startup_failure(None) is None and session.startup_failure(tmp_path / "missing") is None
