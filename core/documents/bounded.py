"""Reading a document with bounded work: the reader runs in a child process under a CPU-time and a memory limit,
so a small hostile file (a PDF whose streams decompress to gigabytes, an Office file whose XML costs minutes to
lay out) costs one refused document, never the ingest, the sync or the bot worker that runs it.

Size limits alone bound bytes, not work: a 15 kB PDF took 19 s of CPU and 237 MB to read. Here each document gets
`ReadLimits.cpu_seconds` of CPU time and `memory_bytes` of memory beyond what the reading process already holds
(`RLIMIT_CPU` and `RLIMIT_AS`, set again before each document). Past the CPU limit the kernel stops the process
(SIGXCPU); past the memory limit an allocation fails (`MemoryError`, or a crash in a C library). Either way
`Unreadable` names the limit, and the next document starts a fresh process. A process that neither answers nor
uses CPU (blocked) is stopped after a while (`MIN_WALL_S`, or `WALL_FACTOR` times the CPU limit).

One process is reused across documents: starting one costs tens of milliseconds and importing the readers far
more, which a 1,000-document ingest would pay a thousand times. It starts from the "forkserver" (a small clean
process that has imported the readers once, where the platform has one) rather than by forking the caller, which
may hold threads and open models.
Reads are serialised by a lock: a sync and an ingest never run at once on one database anyway.
"""

import functools
import math
import multiprocessing
import os
import resource
import signal
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any, Final, TypeVar, cast

from core.documents.limits import Unreadable
from core.documents.model import Document

T = TypeVar("T")
MEGABYTE: Final = 1024 * 1024
WALL_FACTOR: Final = 10
MIN_WALL_S: Final = 300
"""A read that has not answered after `WALL_FACTOR` times the CPU limit, and at least `MIN_WALL_S` seconds (a
reader blocked on something, using no CPU), is stopped too. Generous, since a loaded machine may run a reader at
a tenth of a core or less, and the CPU limit is what stops a reader that works."""
_CONTEXT: Final[Any] = multiprocessing.get_context(
    "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn")
_PRELOADED: Final = ("core.documents.formats", "pdfplumber", "mammoth", "pptx", "bs4", "markdownify", "trafilatura")
"""Imported once by the forkserver (those of the `formats` extra where it is installed), so a new reading
process (each application's first, one after a limit stopped the last) starts with its readers imported: a fork,
not seconds of imports."""
if _CONTEXT.get_start_method() == "forkserver":
    _CONTEXT.set_forkserver_preload(list(_PRELOADED))


@dataclass(frozen=True, kw_only=True)
class ReadLimits:
    """What reading one document may cost (settings `SOURCED_READ_CPU_S`, `SOURCED_READ_MEMORY_MB`)."""

    cpu_seconds: int = 60
    """A 500-page PDF reads in well under this on one core; the 15 kB PDF of issue 55 took 19 s."""
    memory_bytes: int = 1024 * MEGABYTE
    """Beyond what the reading process holds before the document: a 100 MB PDF read page by page needs a few
    hundred megabytes; a zip or stream bomb needs more."""


class ReadingProcess:
    """Runs readers in a child process under `limits`; `read` returns the document or raises `Unreadable`. No
    process runs until the first read."""

    def __init__(self, limits: ReadLimits = ReadLimits()) -> None:
        self.limits = limits
        self._lock = threading.Lock()
        self._worker: _Worker | None = None

    def read(self, reader: Callable[[T], Document], argument: T) -> Document:
        """`reader(argument)` in the child process. `reader` must be a module-level function and `argument`
        picklable; the reader's `Unreadable` comes back as it was raised, any other error as an `Unreadable`."""
        with self._lock:
            return self._worker_for_now().run(reader, argument)

    def close(self) -> None:
        with self._lock:
            if self._worker is not None:
                self._worker.stop()
                self._worker = None

    def _worker_for_now(self) -> "_Worker":
        """The running worker, or a new one (the first read, after a limit stopped the last one, or in a process
        forked from the one that started it)."""
        if self._worker is None or self._worker.owner != os.getpid() or not self._worker.alive():
            self._worker = _Worker(self.limits)
        return self._worker


class _Worker:
    """One child process and the parent's end of its pipe."""

    def __init__(self, limits: ReadLimits) -> None:
        self.owner = os.getpid()
        self._limits = limits
        self._pipe, child_end = _CONTEXT.Pipe()
        self._process: BaseProcess = _CONTEXT.Process(
            target=_serve, args=(child_end, limits), daemon=True, name="sourced-reader")
        self._process.start()
        child_end.close()
        # An application dropped without `close` (a test's, a benchmark's) leaves no idle process behind.
        self.stop = weakref.finalize(self, _stop, self._pipe, self._process, self.owner)

    def alive(self) -> bool:
        return self._process.is_alive()

    def run(self, reader: Callable[[Any], Document], argument: object) -> Document:
        kind, value = self._exchange(reader, argument)
        if kind == "read":
            return cast(Document, value)
        if kind not in ("unreadable", "error"):
            self.stop()  # over a limit, blocked or gone: the next document gets a fresh process
        raise Unreadable(self._reason(kind, value))

    def _exchange(self, reader: Callable[[Any], Document], argument: object) -> tuple[str, Any]:
        """The child's answer (`_serve`), or `blocked` or `died` when it gave none."""
        try:
            self._pipe.send((reader, argument))
            if not self._pipe.poll(self._wall_s()):
                return "blocked", None
            answer: tuple[str, Any] = self._pipe.recv()
        except (EOFError, BrokenPipeError, ConnectionResetError):
            return "died", None
        return answer

    def _wall_s(self) -> int:
        return max(self._limits.cpu_seconds * WALL_FACTOR, MIN_WALL_S)

    def _reason(self, kind: str, value: object) -> str:
        cpu, megabytes = self._limits.cpu_seconds, self._limits.memory_bytes // MEGABYTE
        if kind == "unreadable":
            return str(value)
        if kind == "memory":
            return f"needs more than the {megabytes:,} MB of memory one document may take to read"
        if kind == "blocked":
            return f"was not read within {self._wall_s():,} s, and was stopped"
        if kind == "error":
            return f"could not be read ({value})"
        if self._process.exitcode == -signal.SIGXCPU:
            return f"takes more than the {cpu:,} s of CPU time one document may take to read"
        code = self._process.exitcode or 0
        how = signal.Signals(-code).name if code < 0 else f"exit {code}"
        return (f"stopped its reader ({how}): most likely it needs more than the {megabytes:,} MB of memory one "
                f"document may take to read")


def _stop(pipe: Connection, process: BaseProcess, owner: int) -> None:
    pipe.close()
    if os.getpid() != owner:
        return  # a copy forked with its owner: the process is the owner's to stop
    if process.is_alive():
        process.kill()
    process.join()


def _serve(pipe: Connection, limits: ReadLimits) -> None:
    """The child's loop: one document at a time, each under fresh limits, until the parent's end closes."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a reader stopped at a limit leaves no core file behind
    while True:
        try:
            reader, argument = pipe.recv()
        except EOFError:
            return
        _limit(limits)
        try:
            pipe.send(("read", reader(argument)))
        except Unreadable as error:
            pipe.send(("unreadable", str(error)))
        except MemoryError:
            pipe.send(("memory", None))
            return  # its heap may be left fragmented or half-built: the next document gets a fresh process
        except Exception as error:  # a reader's own error on a damaged file: that document's, not the worker's
            pipe.send(("error", f"{type(error).__name__}: {error}".splitlines()[0][:300]))


def _limit(limits: ReadLimits) -> None:
    """The CPU and memory this document may take, counted from what the process has used and holds now."""
    used = resource.getrusage(resource.RUSAGE_SELF)
    _set(resource.RLIMIT_CPU, math.ceil(used.ru_utime + used.ru_stime) + limits.cpu_seconds)
    held = _address_space()
    if held is not None:
        _set(resource.RLIMIT_AS, held + limits.memory_bytes)


def _set(which: int, soft: int) -> None:
    _, hard = resource.getrlimit(which)
    resource.setrlimit(which, (soft if hard == resource.RLIM_INFINITY else min(soft, hard), hard))


def _address_space() -> int | None:
    """The process's virtual size, where the platform says it (Linux); elsewhere `RLIMIT_AS` is not enforced
    (macOS) and only the CPU limit applies."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return None


@functools.cache
def reading_process_for(limits: ReadLimits) -> ReadingProcess:
    """The one reading process of this process under `limits`, shared by every application in it: a process's
    readers warm up on their first documents (trafilatura's and pdfminer's caches, a second or more), so a new
    one for each application (each test's, each benchmark run's) would pay that again."""
    return ReadingProcess(limits)


SHARED: Final = reading_process_for(ReadLimits())
"""The reading process of callers given none (the benchmarks, `sourced eval`), under the default limits."""
