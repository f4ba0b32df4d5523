"""How lagReport starts Spark: the workers' Python, where Spark's own log goes, progress, errors.

Only the pipeline imports pyspark; the CLI reaches this module after checking the extra.

- Python workers run ``sc.pythonExec``, which pyspark takes from ``PYSPARK_PYTHON`` or else
  ``python3`` on PATH (it ignores ``spark.pyspark.python`` unless spark-submit runs the script).
  When mqctl starts a local Spark itself, the workers run the interpreter mqctl runs in.
- When mqctl launches the JVM, its log4j2 output goes to a file (``-Dlog4j2.configurationFile``
  in spark.driver.extraJavaOptions) and the JVM's own stdout/stderr (start-up warnings printed
  before log4j2 is configured, Python worker stderr) are appended to the same file.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, TextIO

from pyspark import SparkConf, SparkContext
from pyspark.sql import SparkSession

from mqctl.pipeline.inputs import is_local_master, local_spark

__all__ = [
    "Progress",
    "build_session",
    "has_active_session",
    "is_local_master",
    "job_error",
    "launches_jvm",
    "new_log_file",
    "pin_worker_python",
    "startup_failure",
]

_LISTING_THRESHOLD = "spark.sql.sources.parallelPartitionDiscovery.threshold"
_SHUFFLE_PARTITIONS = "spark.sql.shuffle.partitions"
# binaryFile rows are whole CQ files (6 MB by default): Arrow's default 10,000 rows per batch
# would ask a Python worker for 60 GB at once.
_ROWS_PER_ARROW_BATCH = 8
_LOG_PROPERTY = "mqctl.sparkLog"
_KEEP_LOGS = 20
# Spark's own defaults (log4j2-defaults.properties), written to a file instead of the console.
_LOG4J2 = f"""\
# Written by mqctl lagReport: Spark's log to the file named by -D{_LOG_PROPERTY}=PATH.
rootLogger.level = info
rootLogger.appenderRef.file.ref = file
appender.file.type = File
appender.file.name = file
appender.file.fileName = ${{sys:{_LOG_PROPERTY}}}
appender.file.append = true
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = %d{{yy/MM/dd HH:mm:ss}} %p %c{{1}}: %m%n%ex
logger.jetty.name = org.sparkproject.jetty
logger.jetty.level = warn
logger.jetty2.name = org.sparkproject.jetty.util.component.AbstractLifeCycle
logger.jetty2.level = error
logger.parquet.name = org.apache.parquet.CorruptStatistics
logger.parquet.level = error
"""


def has_active_session() -> bool:
    return SparkSession.getActiveSession() is not None


def launches_jvm() -> bool:
    """Whether starting a session now launches a JVM (not under spark-submit, none running yet)."""
    return "PYSPARK_GATEWAY_PORT" not in os.environ and getattr(SparkContext, "_gateway", None) is None


def _log_dirs() -> list[Path]:
    xdg = os.environ.get("XDG_STATE_HOME", "")
    dirs = [Path(xdg)] if os.path.isabs(xdg) else []
    try:
        dirs += [] if dirs else [Path.home() / ".local" / "state"]
    except RuntimeError:  # no home directory to be found
        pass
    dirs = [d / "mqctl" / "spark" for d in dirs]
    return [*dirs, Path(tempfile.gettempdir()) / f"mqctl-{os.getuid()}" / "spark"]


def new_log_file(prefix: str = "lagReport") -> Path:
    """A fresh log path: $XDG_STATE_HOME/mqctl/spark/ (else ~/.local/state/...), or the temp dir.

    Keeps the newest few logs of this prefix (names sort by time); older ones are removed.
    """
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for d in _log_dirs():
        try:
            d.mkdir(parents=True, exist_ok=True)
            path = d / f"{prefix}-{stamp}-{os.getpid()}.log"
            path.touch()
        except OSError:
            continue
        for old in sorted(d.glob(f"{prefix}-*.log"))[:-_KEEP_LOGS]:
            try:
                old.unlink(missing_ok=True)
            except OSError:
                pass
        return path
    raise OSError("no writable directory for Spark's log")


def _java_quote(value: str) -> str:
    """Quote for Spark's option-string parser (spark.driver.extraJavaOptions)."""
    if re.fullmatch(r"[\w@%+=:,./-]+", value):
        return value
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _log4j2_config(log_dir: Path) -> Path:
    """The log4j2 properties file (the same text every run; replaced atomically)."""
    path = log_dir / "log4j2-mqctl.properties"
    if not path.is_file() or path.read_text() != _LOG4J2:
        from mqctl import fsio

        fsio.atomic_write(path, _LOG4J2.encode("utf-8"))
    return path


def _options(master: str | None, driver_memory: str, app_name: str, log_file: Path | None) -> dict[str, str]:
    submitted = "PYSPARK_GATEWAY_PORT" in os.environ
    opts = {
        "spark.app.name": app_name,
        "spark.sql.execution.arrow.maxRecordsPerBatch": str(_ROWS_PER_ARROW_BATCH),
        "spark.ui.showConsoleProgress": "false",
    }
    if master is not None:
        opts["spark.master"] = master
    elif not submitted:
        opts["spark.master"] = "local[*]"
    if not submitted:
        # We start the JVM, so its options are ours to set. 6 MB CQ files are "humongous" objects
        # for G1's default 1-4 MB regions (allocated and collected the slow way); 32 MB regions make
        # them ordinary. On a cluster pass the same through spark.executor.extraJavaOptions.
        java = ["-XX:G1HeapRegionSize=32m"]
        if log_file is not None:
            config = _log4j2_config(log_file.parent)
            java += [f"-Dlog4j2.configurationFile={_java_quote(str(config))}"]
            java += [f"-D{_LOG_PROPERTY}={_java_quote(str(log_file))}"]
        opts["spark.driver.memory"] = driver_memory
        opts["spark.driver.extraJavaOptions"] = " ".join(java)
    return opts


def _launch_quietly(opts: Mapping[str, str], log_file: Path) -> None:
    """Start the JVM with its stdout and stderr appended to ``log_file``, and the SparkContext."""
    from pyspark.java_gateway import launch_gateway

    conf = SparkConf(loadDefaults=False).setAll(list(opts.items()))
    with open(log_file, "ab") as log:  # the child keeps its own copy of the descriptor
        gateway = launch_gateway(conf, popen_kwargs={"stdout": log, "stderr": log})
    SparkContext(conf=conf, gateway=gateway)


def build_session(
    master: str | None = None,
    *,
    driver_memory: str = "1g",
    app_name: str = "mqctl-lagReport",
    log_file: Path | None = None,
    conf: Mapping[str, str] | None = None,
) -> SparkSession:
    """The session lagReport runs in.

    Under spark-submit (a gateway is already up) the master and memory come from spark-submit
    and are left alone; run directly, the default is local[*] with a modest driver. ``log_file``:
    when this call launches the JVM, Spark's log and the JVM's output go there, not to stderr.
    ``conf``: further settings (they win over these defaults).
    """
    fresh = not has_active_session() and "PYSPARK_GATEWAY_PORT" not in os.environ
    log_file = log_file if launches_jvm() else None
    opts = {**_options(master, driver_memory, app_name, log_file), **(conf or {})}
    if log_file is not None:
        _launch_quietly(opts, log_file)
    builder = SparkSession.builder
    for k, v in opts.items():
        builder = builder.config(k, v)
    spark = builder.getOrCreate()
    if fresh:
        pin_worker_python(spark.sparkContext)
    # The CQ glob expands to one root path per file; above this threshold Spark lists them with a
    # distributed job (one task per path), which costs far more than listing on the driver.
    if spark.conf.get(_LISTING_THRESHOLD, None) in (None, "32"):
        spark.conf.set(_LISTING_THRESHOLD, "100000")
    # After the scan only (queue, group) rows are left: 200 shuffle partitions (the default) cost
    # more in task overhead than the aggregation itself, so use one per core unless set by the user.
    if spark.conf.get(_SHUFFLE_PARTITIONS, None) in (None, "200"):
        spark.conf.set(_SHUFFLE_PARTITIONS, str(max(2, spark.sparkContext.defaultParallelism)))
    return spark


def pin_worker_python(sc: SparkContext) -> str:
    """Make a local master's Python workers run this interpreter, unless the user chose one.

    pyspark starts ``PYSPARK_PYTHON`` or else the first ``python3`` on PATH, which need not see
    mqctl, pyarrow or pandas (a venv run without activating it). A user's ``PYSPARK_PYTHON`` /
    ``PYSPARK_DRIVER_PYTHON`` is left alone; a ``spark.pyspark.python`` setting (spark-defaults.conf,
    PYSPARK_SUBMIT_ARGS), which pyspark itself ignores when not run by spark-submit, is used.
    Non-local masters are left alone: a cluster's executors have their own Python.
    Returns the workers' interpreter.
    """
    if not local_spark(sc.master):
        return str(sc.pythonExec)
    if os.environ.get("PYSPARK_PYTHON") or os.environ.get("PYSPARK_DRIVER_PYTHON"):
        return str(sc.pythonExec)
    chosen = sc.getConf().get("spark.pyspark.python", None) or sys.executable
    if chosen:
        sc.pythonExec = chosen
    return str(sc.pythonExec)


# ---------------------------------------------------------------------------------------------
# progress and errors


class Progress:
    """One refreshed line on a terminal's stderr: phase, running stage, tasks done, elapsed time.

    Silent (no thread at all) when the stream is not a terminal. Never touches stdout.
    """

    def __init__(self, stream: TextIO | None = None, *, enabled: bool = True, interval: float = 0.5) -> None:
        self._stream = stream if stream is not None else sys.stderr
        try:
            self.enabled = enabled and self._stream.isatty() and os.environ.get("TERM") != "dumb"
        except (AttributeError, ValueError):  # no isatty, or a closed stream
            self.enabled = False
        self._interval = interval
        self._sc: Any = None
        self._phase = "starting Spark"
        self._t0 = time.monotonic()
        self._done = threading.Event()
        self._thread: threading.Thread | None = None

    def attach(self, sc: Any) -> None:
        """Read stage progress from this SparkContext (None: stop asking, e.g. before stop())."""
        self._sc = sc

    def phase(self, text: str) -> None:
        self._phase = text

    def line(self) -> str:
        parts = [f"lagReport: {self._phase}"]
        sc = self._sc
        if sc is not None:
            try:
                tracker = sc.statusTracker()
                stages = [tracker.getStageInfo(s) for s in sorted(tracker.getActiveStageIds())]
            except Exception:  # noqa: BLE001 - a context stopping under us: show no stage
                stages = []
            stages = [s for s in stages if s is not None]
            if stages:
                ids = "+".join(str(s.stageId) for s in stages)
                done, total = sum(s.numCompletedTasks for s in stages), sum(s.numTasks for s in stages)
                running, failed = sum(s.numActiveTasks for s in stages), sum(s.numFailedTasks for s in stages)
                parts.append(
                    f"stage{'s' if len(stages) > 1 else ''} {ids}: {done}/{total} tasks"
                    + (f", {running} running" if running else "")
                    + (f", {failed} failed" if failed else "")
                )
        secs = int(time.monotonic() - self._t0)
        parts.append(f"{secs // 60}:{secs % 60:02d}")
        return " | ".join(parts)

    def _run(self) -> None:
        while not self._done.is_set():
            width = shutil.get_terminal_size((80, 24)).columns - 1
            self._stream.write("\r" + self.line()[:width] + "\x1b[K")
            self._stream.flush()
            self._done.wait(self._interval)

    def __enter__(self) -> Progress:
        if self.enabled:
            self._thread = threading.Thread(target=self._run, name="mqctl-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(
        self, tp: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._done.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
            self._stream.write("\r\x1b[K")
            self._stream.flush()


_JVM_EXIT = re.compile(r'^Exception in thread "main" (.+)$|^\S*spark-class: line \d+: (.+)$|^(Error: .+)$')


def startup_failure(log_file: Path | None) -> str | None:
    """Why the JVM exited during start-up, from its output in ``log_file`` (None: not found)."""
    if log_file is None:
        return None
    try:
        text = log_file.read_text(errors="replace")
    except OSError:
        return None
    for ln in text.splitlines():
        m = _JVM_EXIT.match(ln.strip())
        if m:
            return next(g for g in m.groups() if g)
    return None


_PY_ERROR = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt)): (.*)$")


def _summary(e: BaseException) -> tuple[str, str | None, str]:
    """(one line, the Python exception class raised in a worker if any, its message)."""
    text = str(e).strip()
    lines = [ln.rstrip() for ln in text.splitlines() if ln.strip()]
    if "Traceback (most recent call last)" in text:
        # A Python worker failed: its last "Name: message" line says why.
        for ln in reversed(lines):
            m = _PY_ERROR.match(ln)
            if m:
                return ln, m.group(1), m.group(2)
    for ln in lines:
        if ln.startswith("An error occurred while calling"):
            continue
        ln = ln.lstrip(": ").strip()
        return ln, None, ln
    return type(e).__name__, None, ""


def job_error(e: BaseException, log_hint: str | None, worker_python: str | None = None) -> Exception:
    """A Spark failure as one of mqctl's one-line errors (an mqctl error in a worker keeps its kind).

    ``log_hint`` says where Spark's log is; ``worker_python``: the workers' interpreter, named
    when a worker could not import a module.
    """
    from mqctl import errors

    line, py_class, message = _summary(e)
    if py_class is not None and py_class.startswith("mqctl.errors."):
        cls = getattr(errors, py_class.rsplit(".", 1)[1], None)
        if isinstance(cls, type) and issubclass(cls, errors.MqctlError):
            try:
                return cls(message, log_hint)
            except TypeError:  # a kind built from other fields (BrokerResponseError): generic
                pass
    hints = [log_hint] if log_hint else []
    if py_class in ("ModuleNotFoundError", "ImportError"):
        who = f"the Python workers ({worker_python})" if worker_python else "the Python workers"
        hints.insert(
            0,
            f"{who} need mqctl[spark]: set PYSPARK_PYTHON or spark.pyspark.python to a Python that has it",
        )
    return errors.MqctlError(f"Spark job failed: {line}", "; ".join(hints) or None)
