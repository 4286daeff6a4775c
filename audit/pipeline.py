"""The PySpark audit: scenarios → targets on executors → per-scenario rows → aggregates.

Layout of ``--out DIR``::

    run.json                       the parameters (a rerun with others is refused)
    results/chunk=00007/target=…/  per-scenario rows (Parquet), one folder per chunk
    results/_done/chunk-00007.json the chunk's marker, written atomically after its rows
    aggregates/{invariants,by_size,disagreement}/   Parquet, partitioned by target
    counterexamples/*.json         the smallest counterexample per (target, invariant)
    summary.json  timings.json  index.html  *.svg

Scenarios are processed in chunks of consecutive indexes. A chunk's rows are written to a
hidden temporary folder, renamed into place, and only then is its marker written (write to a
temporary file + rename), so after a crash or ``kill -9`` a rerun drops any chunk folder
without a marker and runs exactly the chunks that lack one: no scenario is counted twice.

Nothing loops over scenarios on the driver and nothing collects per-scenario data: a
chunk's input is a range of scenario ids (`scenario_frame`); one ``mapInArrow`` pass over
Arrow batches (`rows.run_targets`) makes each spec from (seed, id) in the Python worker and runs
every target on it, so no spec crosses the JVM; `IN_FLIGHT` chunks run at once so that no
core idles behind one chunk's slowest task; and only aggregates — a few rows per target —
come back to the driver.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .config import AuditConfig, AuditError
from .examples import shrink_and_draw
from .report import aggregate, write_summary
from .report_html import write_html
from .rows import result_schema, run_targets
from .session import spark_schema, spark_session
from .summary_shapes import AuditSummary
from .targets import Resolver, plugin_file, reference_name

__all__ = ["IN_FLIGHT", "AuditConfig", "AuditError", "AuditOutcome", "ChunkProgress", "run_audit",
           "scenario_frame"]

#: Chunks (Spark jobs) run at once: while one waits for its slowest task, the next one's
#: tasks keep the other cores busy.
IN_FLIGHT = 2
#: told the scenarios of each chunk as it finishes (the command line shows the progress)
ChunkProgress = Callable[[int], None]


def scenario_frame(spark: Any, config: AuditConfig, lo: int, hi: int, slices: int) -> Any:
    """The input of chunk [lo, hi): scenario ids (``spark.range``, nothing shipped), or
    the corpus files with those indexes as (scenario, value) rows."""
    if config.corpus:
        from pyspark.sql import functions as F

        files = (spark.read.text(os.path.join(os.path.abspath(config.corpus), "*.json"),
                                 wholetext=True)
                 .select(F.input_file_name().alias("path"), "value"))
        indexed = (files.rdd.sortBy(lambda row: row[0], numPartitions=1).zipWithIndex()
                   .filter(lambda pair: lo <= pair[1] < hi)
                   .map(lambda pair: (pair[1], pair[0][1])))
        return spark.createDataFrame(indexed, "scenario long, value string").repartition(slices)
    return spark.range(lo, hi, 1, slices)


def _corpus_size(spark: Any, corpus: str) -> int:
    pattern = os.path.join(os.path.abspath(corpus), "*.json")
    try:
        return int(spark.read.text(pattern, wholetext=True).count())
    except Exception as exc:  # noqa: BLE001 - Spark's AnalysisException: no such path
        raise AuditError(f"cannot read the corpus {corpus}: {str(exc).splitlines()[0]}"
                         ) from None


def _write_json_atomic(path: Path, data: Any) -> None:
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def _prepare_out(config: AuditConfig) -> tuple[Path, set[int]]:
    """Create or resume ``config.out``; returns it and the chunks already done."""
    out = Path(config.out)
    results = out / "results"
    done_dir = results / "_done"
    params = config.run_params()
    run_file = out / "run.json"
    if run_file.exists():
        try:
            previous = json.loads(run_file.read_text(encoding="utf-8"))
        except ValueError:
            previous = None
        if previous != params:
            raise AuditError(f"{out} holds an audit with other parameters; use another --out "
                             "or --fresh")
    done_dir.mkdir(parents=True, exist_ok=True)
    if not run_file.exists():
        _write_json_atomic(run_file, params)
    done = {int(p.stem.split("-")[1]) for p in done_dir.glob("chunk-*.json")}
    for child in results.iterdir():  # half-written chunks of an interrupted run
        if child.name.startswith("_tmp-") or (
                child.name.startswith("chunk=") and int(child.name[6:]) not in done):
            shutil.rmtree(child, ignore_errors=True)
    return out, done


def _run_chunk(spark: Any, config: AuditConfig, fn: Callable[[Iterator[Any]], Iterator[Any]],
               results: Path, chunk: tuple[int, int, int], slices: int) -> int:
    """Run one chunk: rows to a hidden folder, renamed into place, then the marker."""
    index, lo, hi = chunk
    frame = scenario_frame(spark, config, lo, hi, min(slices, hi - lo))
    rows = frame.mapInArrow(fn, spark_schema(result_schema()))
    tmp = results / f"_tmp-chunk={index:05d}"
    shutil.rmtree(tmp, ignore_errors=True)
    rows.write.partitionBy("target").parquet(str(tmp))
    final = results / f"chunk={index:05d}"
    shutil.rmtree(final, ignore_errors=True)
    os.replace(tmp, final)
    _write_json_atomic(results / "_done" / f"chunk-{index:05d}.json",
                       {"chunk": index, "first": lo, "end": hi, "scenarios": hi - lo,
                        "targets": list(config.targets)})
    return hi - lo


def _run_chunks(spark: Any, config: AuditConfig, fn: Callable[[Iterator[Any]], Iterator[Any]],
                results: Path, todo: list[tuple[int, int, int]], slices: int,
                progress: ChunkProgress | None) -> int:
    """Run the chunks ``todo``, `IN_FLIGHT` Spark jobs at a time (one driver thread each),
    so the cores never wait for one chunk's slowest task; returns how many ran."""
    lock = threading.Lock()
    ran = 0

    def one(chunk: tuple[int, int, int]) -> None:
        nonlocal ran
        scenarios = _run_chunk(spark, config, fn, results, chunk, slices)
        with lock:
            ran += 1
            if progress is not None:
                progress(scenarios)

    with ThreadPoolExecutor(max_workers=config.in_flight or IN_FLIGHT) as pool:
        futures = [pool.submit(one, chunk) for chunk in todo]
        finished, _ = wait(futures, return_when=FIRST_EXCEPTION)
        for future in futures:
            future.cancel()
        for future in finished:
            future.result()  # re-raise the first failure, if any
    return ran


@dataclass
class AuditOutcome:
    out: Path
    summary: AuditSummary
    seconds: float
    chunks_run: int

    @property
    def ok(self) -> bool:
        return bool(self.summary["ok"])


def run_audit(config: AuditConfig, resolver: Resolver, spark: Any | None = None,
              progress: ChunkProgress | None = None) -> AuditOutcome:
    """Run (or resume) an audit and write its outputs (see the module docstring);
    ``progress`` hears of every chunk run, with its scenarios."""
    started = time.perf_counter()
    if not config.targets:
        raise AuditError("audit needs at least one --target")
    if len(set(config.targets)) != len(config.targets):
        raise AuditError("a --target is given twice")
    for name in config.targets:  # fail fast, with one line, on the driver
        try:
            assignor = resolver(name).assignor
            if config.reference:
                resolver(reference_name(config.reference, assignor))
        except ValueError as exc:
            raise AuditError(str(exc)) from None
    out = Path(config.out)
    out.mkdir(parents=True, exist_ok=True)
    if spark is None:
        from pyspark.sql import SparkSession

        spark = SparkSession.getActiveSession()
        own_session = spark is None
    else:
        own_session = False
    if spark is None:
        spark = spark_session(config.master, out / "_package", config.extra_conf)
    for name in config.targets:
        path = plugin_file(name)
        if path:
            spark.sparkContext.addFile(path)
    try:
        if config.corpus:
            config.scenarios = _corpus_size(spark, config.corpus)
        out, done = _prepare_out(config)
        chunks = config.chunks()
        slices = config.slices or max(2, int(spark.sparkContext.defaultParallelism))
        fn = run_targets(list(config.targets), resolver,
                         None if config.corpus else config.seed, config.reference)
        todo = [(i, lo, hi) for i, lo, hi in chunks if i not in done]
        chunks_run = _run_chunks(spark, config, fn, out / "results", todo, slices, progress)
        chunks_done = time.perf_counter()
        summary, timings = aggregate(spark, out, config)
        aggregated = time.perf_counter()
        timings["chunks_seconds"] = round(chunks_done - started, 3)
        timings["aggregate_seconds"] = round(aggregated - chunks_done, 3)
        timings["chunks_run"] = chunks_run
        write_summary(out, summary)
        figures, timings["shrink"] = shrink_and_draw(out, summary, resolver,
                                                     config.shrink_seconds)
        write_html(out, summary, timings, figures)
        timings["wall_seconds"] = round(time.perf_counter() - started, 3)
        _write_json_atomic(out / "timings.json", timings)
        return AuditOutcome(out, summary, time.perf_counter() - started, chunks_run)
    finally:
        if own_session:
            spark.stop()
