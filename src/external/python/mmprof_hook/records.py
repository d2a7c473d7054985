"""Per-process JSON Lines writer: hook-<pid>.jsonl in MMPROF_HOOK_DIR.

Hot-path cost is one deque append and two comparisons per record.  Lines are
written in batches: when FLUSH_RECORDS lines are pending, or when a record
arrives FLUSH_NS after the previous write, and explicitly at exit, before the
stop KeyboardInterrupt, and (in worker processes) from a small flusher thread
every FLUSH_NS.  The file is opened on the first write with O_APPEND and its
first line is always the ``proc`` record of the process.

Any failure inside the hook goes through ``fail``: it writes an ``error``
record (best effort) and turns the hook off in this process, so every wrapper
falls through to the original torch code from then on.
"""

import collections
import json
import os
import sys
import threading
import time

FLUSH_RECORDS = 256
FLUSH_NS = 200_000_000
MESSAGE_CHARS = 4000  # of an exception's message (a worker's carries its whole traceback)

if time.get_clock_info("monotonic").implementation == "clock_gettime(CLOCK_MONOTONIC)":
    now_ns = time.monotonic_ns  # the same clock, without the extra argument
else:  # pragma: no cover - not Linux
    _clock_gettime_ns = time.clock_gettime_ns
    _MONO = time.CLOCK_MONOTONIC

    def now_ns():
        return _clock_gettime_ns(_MONO)

_dumps = json.JSONEncoder(separators=(",", ":"), default=repr).encode


def dumps(obj):
    """Compact JSON; objects JSON cannot represent are written as their repr."""
    return _dumps(obj)


class _State:
    __slots__ = ("active", "dir", "cfg", "pid", "fd", "queue", "last_write", "lock",
                 "role", "worker_id", "loader", "main_pid", "flusher", "versions_done",
                 "problems_done", "stopped", "finalizer", "watch")

    def __init__(self):
        self.active = False
        self.dir = None
        self.cfg = None
        self.stopped = False
        self._reset_process()

    def _reset_process(self):
        self.pid = os.getpid()
        self.fd = None
        self.queue = collections.deque()
        self.last_write = 0          # 0: the first record is written at once
        self.lock = threading.RLock()  # re-entrant: a signal handler may record during a flush
        self.role = "main"
        self.worker_id = None
        self.loader = None
        self.main_pid = None
        self.flusher = None
        self.versions_done = False
        self.problems_done = False
        self.finalizer = None
        self.watch = None  # called with now_ns by a worker's flush thread (the stuck-fetch check)


S = _State()
_fork_handlers = []   # callables run in a forked child after the writer reset


def init(cfg):
    S.cfg = cfg
    S.dir = cfg.dir
    S.active = True
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _after_fork_in_child():
    # The child must not write the parent's pending lines or share its file
    # descriptor; it starts its own file on its first record.
    fd = S.fd
    S._reset_process()
    if fd is not None:
        try:
            os.close(fd)
        except OSError:
            pass
    for fn in _fork_handlers:
        try:
            fn()
        except Exception:
            pass


def emit(line, now):
    """Queue one JSON line (without newline); ``now`` is a recent timestamp."""
    q = S.queue
    q.append(line)
    if len(q) >= FLUSH_RECORDS or now - S.last_write >= FLUSH_NS:
        flush(False)


def _env_int(name):
    raw = os.environ.get(name)
    try:
        return int(raw) if raw not in (None, "") else None
    except ValueError:
        return None


def proc_record():
    return dumps({
        "t": "proc", "pid": S.pid, "ppid": os.getppid(), "role": S.role,
        "rank": _env_int("RANK"), "local_rank": _env_int("LOCAL_RANK"),
        "world_size": _env_int("WORLD_SIZE"), "worker_id": S.worker_id,
        "loader": S.loader, "main_pid": S.main_pid,
        "argv": list(getattr(sys, "argv", None) or []), "ns": now_ns(),
    })


def _open():
    os.makedirs(S.dir, exist_ok=True)
    path = os.path.join(S.dir, "hook-%d.jsonl" % S.pid)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o644)
    S.fd = fd
    return fd


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def announce():
    """Write this process's proc line now: a worker that records nothing of its own (a
    torchdata.nodes mapper's) is then still found, with its loader. Never raises."""
    with S.lock:
        try:
            if S.fd is None:
                _open()
                _write_all(S.fd, (proc_record() + "\n").encode("utf-8", "backslashreplace"))
        except Exception:
            S.active = False
            S.queue.clear()


def flush(block=True):
    """Write every pending line.  Never raises."""
    lock = S.lock
    if not lock.acquire(block):
        return  # another thread is writing right now; it takes our lines too
    try:
        q = S.queue
        if not q:
            S.last_write = now_ns()
            return
        parts = []
        if S.fd is None:
            _open()
            parts.append(proc_record())
        pop = q.popleft
        try:
            while True:
                parts.append(pop())
        except IndexError:
            pass
        parts.append("")
        _write_all(S.fd, "\n".join(parts).encode("utf-8", "backslashreplace"))
        S.last_write = now_ns()
    except Exception:
        # The file cannot be written: nothing more can be recorded here.
        S.active = False
        S.queue.clear()
    finally:
        lock.release()


def error_message(exc):
    tb = getattr(exc, "__traceback__", None)
    where = ""
    while tb is not None:
        if tb.tb_next is None:
            where = " (at %s:%d)" % (tb.tb_frame.f_code.co_filename, tb.tb_lineno)
        tb = tb.tb_next
    return "%s: %s%s" % (type(exc).__name__, exc, where)


def fail(where, exc):
    """An internal hook error: record it, then turn the hook off here."""
    if not S.active:
        return
    S.active = False
    try:
        S.queue.append(dumps({"t": "error", "where": where,
                              "message": error_message(exc), "ns": now_ns()}))
        flush()
    except Exception:
        pass


def guarded(where, fn, *args):
    """fn(*args) for the hook's own bookkeeping once per loader or epoch: an error in it is the
    hook's (fail), never the job's. The per-batch and per-item records keep their try inline:
    one call less on the path every sample takes."""
    try:
        fn(*args)
    except Exception as exc:
        fail(where, exc)


def _frame(f):
    return {"file": f.filename, "line": f.lineno, "function": f.name}


# torch re-raises a worker's exception in the main process with the worker's traceback in its
# message (torch/_utils.py, ExceptionWrapper.reraise): "Caught ValueError in DataLoader worker
# process 0.\nOriginal Traceback (most recent call last):\n  File ..., line N, in f\n...".
_WORKER = None


def _in_worker(message):
    """What a worker raised ({process, error, raised_at}), from such a message; None otherwise."""
    global _WORKER
    import re
    if _WORKER is None:
        _WORKER = (re.compile(r"Caught \w+ in (DataLoader worker process \d+)\.\n"
                              r"Original Traceback"),
                   re.compile(r'^  File "(.*)", line (\d+), in (.*)$', re.M))
    head, frame = _WORKER
    m = head.match(message)
    if m is None:
        return None
    frames = frame.findall(message)
    lines = [line for line in message.splitlines() if line.strip()]
    return {"process": m.group(1), "error": lines[-1],
            "raised_at": {"file": frames[-1][0], "line": int(frames[-1][1]),
                          "function": frames[-1][2]} if frames else None}


def exception(exc):
    """The job's uncaught exception (from sys.excepthook, in a main process): its type, its
    message (at most MESSAGE_CHARS), the last line of the job's own script in its traceback,
    the line that raised it, and what a DataLoader worker raised when it is torch's re-raise
    of that.  The KeyboardInterrupt of the hook's own stop is not one.
    Written at once, before the interpreter goes down; works before torch was imported."""
    if S.stopped and isinstance(exc, KeyboardInterrupt):
        return
    if S.dir is None:
        from . import config
        S.dir = config.hook_dir()
    import traceback
    frames = traceback.extract_tb(exc.__traceback__)
    script = os.path.abspath(sys.argv[0]) if getattr(sys, "argv", None) else None
    own = [f for f in frames if os.path.abspath(f.filename) == script]
    kind = type(exc)
    try:
        message = str(exc)
    except Exception as inner:
        message = "(its message could not be read: %s)" % error_message(inner)
    S.queue.append(dumps({
        "t": "exception",
        "type": kind.__qualname__ if kind.__module__ == "builtins"
        else "%s.%s" % (kind.__module__, kind.__qualname__),
        "message": message[:MESSAGE_CHARS], "script": _frame(own[-1]) if own else None,
        "raised_at": _frame(frames[-1]) if frames else None, "worker": _in_worker(message),
        "ns": now_ns()}))
    flush()


def problem(where, message):
    """A setting that could not be used: recorded, the hook stays on."""
    try:
        emit(dumps({"t": "error", "where": where, "message": message, "ns": now_ns()}), 0)
    except Exception:
        pass


def _flusher_loop(period):
    while True:
        time.sleep(period)
        if S.queue:
            flush(False)
        watch = S.watch
        if watch is not None and S.active:
            try:
                watch(now_ns())
            except Exception as exc:
                fail("watch", exc)


def become_worker(loader, worker_id, main_pid):
    """Called once in a DataLoader worker process before its first record."""
    started = S.fd is not None or bool(S.queue)
    S.role = "worker"
    S.worker_id = worker_id
    S.loader = loader
    S.main_pid = main_pid
    if started:
        # This process recorded as "main" before becoming a worker (a spawn
        # child re-running a script that builds a loader outside its
        # __main__ guard): a new proc line starts the worker's section.
        S.queue.append(proc_record())
    if S.finalizer is None:
        # Workers leave through os._exit after multiprocessing's
        # _exit_function, which runs these finalizers; atexit does not run.
        import multiprocessing.util as mp_util
        S.finalizer = mp_util.Finalize(None, flush, exitpriority=-100)
    if S.flusher is None:
        # Bounds what a killed worker loses to about FLUSH_NS of records,
        # also while it sits idle between epochs.
        t = threading.Thread(target=_flusher_loop, args=(FLUSH_NS / 1e9,),
                             name="mmprof-hook-flush", daemon=True)
        t.start()
        S.flusher = t
