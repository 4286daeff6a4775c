"""The Spark session the audit runs on: embedded (``local[*]`` by default) or the one
``spark-submit`` made, with the ``groupcheck`` package shipped to the executors; and the
Spark schema of an Arrow one (`spark_schema`)."""

from __future__ import annotations

import os
import sys
from typing import Any

from .package import package_zip

__all__ = ["DEFAULT_MASTER", "LOCAL_JVM_OPTIONS", "spark_schema", "spark_session"]

DEFAULT_MASTER = "local[*]"
#: For a JVM this process starts (local masters): the JVM only moves small Arrow batches and
#: writes Parquet, so C1 alone and the serial collector leave the cores to the Python
#: workers (measured: half the JVM's CPU time; BENCHMARKS.md).
LOCAL_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


def spark_session(master: str | None, package_dir: str | os.PathLike[str],
                  extra_conf: dict[str, str] | None = None) -> Any:
    """A session on ``master`` (or the one ``spark-submit`` made) with the ``groupcheck``
    package shipped to the executors."""
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = (SparkSession.builder.appName("groupcheck-audit")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.python.worker.reuse", "true")
               .config("spark.sql.execution.arrow.maxRecordsPerBatch", "256")
               .config("spark.sql.shuffle.partitions", "8"))
    if "PYSPARK_GATEWAY_PORT" not in os.environ:  # we start the JVM (not spark-submit)
        builder = builder.config("spark.driver.extraJavaOptions", LOCAL_JVM_OPTIONS)
    if master or "PYSPARK_GATEWAY_PORT" not in os.environ:
        # under spark-submit (which sets PYSPARK_GATEWAY_PORT) its --master wins
        builder = builder.master(master or DEFAULT_MASTER)
    for key, value in (extra_conf or {}).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    zip_path = package_zip(package_dir)
    shipped = spark.sparkContext.getConf().get("spark.submit.pyFiles", "") or ""
    if zip_path is not None and str(zip_path) not in shipped:
        _ship(spark, str(zip_path))
    return spark


def _ship(spark: Any, zip_path: str) -> None:
    """Ship the zip to the executors only. ``addPyFile`` also puts it on this process's
    path, ahead of the installed package: a process spawned from here later (a worker
    pool) would import the executors' copy, which leaves out what they never run."""
    before = set(sys.path)
    spark.sparkContext.addPyFile(zip_path)
    sys.path[:] = [entry for entry in sys.path if entry in before]


def spark_schema(arrow_schema: Any) -> Any:
    """The Spark schema of an Arrow schema."""
    from pyspark.sql.pandas.types import from_arrow_schema

    return from_arrow_schema(arrow_schema)
