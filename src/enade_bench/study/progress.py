"""What the driver of a study shows: one line per model start and end, one bar for the study.

The workers may be other processes or other nodes, so the driver reads what they write to
the study folder (which every worker sees): the start file of each task
(:func:`~enade_bench.study.tasks.started_file`: worker, node, device) and the runner's
append-only logs, whose record lines are the questions answered.  A thread polls both
every half second; the bar counts answered items of all planned (question × shuffle ×
strategy, every model).
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType

from tqdm.auto import tqdm

from enade_bench.regular_file import open_regular
from enade_bench.study.executors.base import timed
from enade_bench.study.tasks import ModelTask, TaskOutcome, started_file

#: Seconds between two looks at the study folder.
POLL_S = 0.5
_RECORD = b'{"kind": "record"'


class StudyProgress:
    """Start and end lines through ``log``; the study's bar (tqdm) when ``bar``.  A task that
    failed or was lost is named through ``alert`` (default ``log``) as soon as it ends: the
    command shows those lines under ``--quiet`` too."""

    def __init__(
        self,
        tasks: Sequence[ModelTask],
        log: Callable[[str], None],
        bar: bool,
        alert: Callable[[str], None] | None = None,
    ) -> None:
        self.tasks = list(tasks)
        self.log = log
        self.alert = alert or log
        self.planned = sum(t.planned for t in self.tasks)
        self._bar = None
        if bar:
            self._bar = tqdm(total=self.planned, desc="study", unit="q", dynamic_ncols=True)
        self._seen: dict[Path, tuple[int, int]] = {}  # log -> (bytes read, records)
        self._started: set[str] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="study-progress", daemon=True)
        self._lock = threading.Lock()
        self.folder = self.tasks[0].output / ".study" if self.tasks else None

    def __enter__(self) -> StudyProgress:
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder.mkdir(parents=True, exist_ok=True)
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        self._thread.join()
        self.poll()
        if self._bar is not None:
            self._bar.close()
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)

    def _loop(self) -> None:
        while not self._stop.wait(POLL_S):
            self.poll()

    def answered(self) -> int:
        """Items answered so far, every model and run (records in the runner's logs)."""
        total = 0
        for task in self.tasks:
            for run in task.runs:
                for log in run.logs:
                    total += self._count(log)
        return total

    def _count(self, log: Path) -> int:
        read, records = self._seen.get(log, (0, 0))
        try:
            with open_regular(log) as handle:
                handle.seek(0, 2)
                if handle.tell() < read:  # the log was started again
                    read, records = 0, 0
                handle.seek(read)
                chunk = handle.read()
        except OSError:
            return records
        complete = chunk[: chunk.rfind(b"\n") + 1]
        records += sum(1 for line in complete.splitlines() if line.startswith(_RECORD))
        self._seen[log] = (read + len(complete), records)
        return records

    def poll(self) -> None:
        """Print the start line of each task that started; move the bar."""
        with self._lock:
            for task in self.tasks:
                if task.label in self._started:
                    continue
                try:
                    worker, node, device = started_file(task).read_text(encoding="utf-8").strip().split("\t")
                except (OSError, ValueError):
                    continue
                self._started.add(task.label)
                self._write(
                    f"{task.label}: started ({task.planned} items) on {worker}, node {node}, {device}"
                )
            if self._bar is not None:
                self._bar.n = min(self.answered(), self.planned)
                self._bar.refresh()

    def retried(self, task: ModelTask, line: str) -> None:
        """A lost task submitted again (``line``: :func:`~enade_bench.study.executors.base.retry_line`),
        named at once; its next try's start is shown as it starts."""
        with self._lock:
            self._started.discard(task.label)
            started_file(task).unlink(missing_ok=True)
        self._write(f"{task.label}: {line}", True)

    def done(self, outcome: TaskOutcome) -> None:
        """The end line of a task (called in the driver as it ends)."""
        self.poll()
        state = "finished" if outcome.error is None else f"failed: {outcome.error}"
        where = f"on {outcome.worker}, node {outcome.node}, {outcome.device}" if outcome.worker else ""
        ran = (
            "" if outcome.error is not None and timed(outcome.error) else f"{outcome.seconds:.0f} s"
        )  # one duration
        shown = " ".join(x for x in (ran, where) if x)
        self._write(f"{outcome.label}: {state}" + (f" ({shown})" if shown else ""), outcome.error is not None)

    def _write(self, line: str, alert: bool = False) -> None:
        write = self.alert if alert else self.log
        if self._bar is not None:
            with self._bar.external_write_mode():  # the line above the bar
                write(line)
        else:
            write(line)
