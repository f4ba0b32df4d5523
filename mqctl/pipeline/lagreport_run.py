"""Running a lagReport Spark job from the CLI: the extra's check, the session, progress, one-line errors.

No pyspark at import: the CLI imports this module for every lagReport call, and ``--help`` stays
light. ``spark_job()`` imports the job (and pyspark) or raises NotAvailableError (exit 7).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from mqctl.errors import MqctlError, NotAvailableError

__all__ = ["run_spark", "spark_job"]

T = TypeVar("T")


def spark_job() -> Any:
    """Import the Spark job, turning a missing extra into one line and exit 7 (not available)."""
    try:
        import pandas  # noqa: F401 - pyspark's Arrow path needs it; fail here, not in an executor
        import pyarrow  # noqa: F401

        from mqctl.pipeline import spark_job as job
    except ImportError as e:
        raise NotAvailableError(
            f"lagReport needs Apache Spark, but {e.name or 'pyspark'} is not installed",
            "pip install 'mqctl[spark]' (pyspark 4, pandas, pyarrow; Spark needs Java 17+)",
        ) from None
    return job


def _start_session(session: Any, master: str | None, driver_memory: str, log_file: Path | None) -> Any:
    try:
        return session.build_session(master, driver_memory=driver_memory, log_file=log_file)
    except Exception as e:  # PySparkRuntimeError JAVA_GATEWAY_EXITED and kin: no usable JVM
        first = str(e).strip().splitlines()[0] if str(e).strip() else "no detail"
        why = session.startup_failure(log_file)  # the JVM's own reason, when it wrote one
        raise NotAvailableError(
            f"cannot start Spark: {why}" if why else f"cannot start Spark ({type(e).__name__}: {first})",
            "Spark needs Java 17+ on PATH or JAVA_HOME; check --master"
            + (f"; Spark's log: {log_file}" if log_file is not None else ""),
        ) from None


def run_spark(
    work: Callable[[Any, Any], T],
    master: str | None,
    driver_memory: str,
    *,
    verbose: bool,
    warn: Callable[[str], None],
    debug: bool = False,
) -> T:
    """Start Spark (its log to a file unless ``verbose``), run ``work(spark, progress)`` with a
    progress line, stop Spark if this call started it. Spark's and the workers' failures become
    one-line MqctlErrors naming the log (``debug``: raised as they are)."""
    from mqctl.pipeline import session

    log_file = None
    if not verbose and session.launches_jvm():
        try:
            log_file = session.new_log_file()
        except OSError as e:
            warn(f"{e}; Spark logs to stderr")
    if log_file is not None:
        sys.stderr.write(f"Spark log: {log_file}\n")
        sys.stderr.flush()
    owned = not session.has_active_session()
    # Progress only when Spark's log is not on stderr too (--verbose, spark-submit: it is).
    with session.Progress(sys.stderr, enabled=log_file is not None) as progress:
        spark = _start_session(session, master, driver_memory, log_file)
        progress.attach(spark.sparkContext)
        try:
            return work(spark, progress)
        except MqctlError:
            raise
        except Exception as e:  # Spark's and the workers' failures: one line, and where the log is
            if debug:
                raise
            log_hint = f"Spark's log: {log_file}" if log_file else None
            raise session.job_error(e, log_hint, spark.sparkContext.pythonExec) from None
        finally:
            progress.attach(None)
            if owned:
                spark.stop()
