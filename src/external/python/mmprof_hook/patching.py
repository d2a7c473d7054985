"""The wrappers around torch's DataLoader machinery.

Every wrapper follows one rule: the original torch function is called exactly
once, with the arguments torch would have got (overrides aside), its result
is returned unchanged and its exceptions propagate unchanged.  The hook's own
work before and after the call is guarded; an exception there goes to
``records.fail`` (an ``error`` record, then the hook is off in this process and
every wrapper falls straight through).

What is wrapped (all looked up by name, so a torch without one of them, or with
one of another signature, gets fewer records and a ``partial`` record naming
it and the figures it costs):

* ``DataLoader.__init__``       overrides, ``loader`` record (and ``versions``)
* ``DataLoader.__iter__``       ``epoch`` record, persistent-iterator reuse
* ``_BaseDataLoaderIter.__next__``  ``batch`` / ``epoch_end``, digests, the stop
* ``_SingleProcessDataLoaderIter.__init__`` / ``_MultiProcessingDataLoaderIter.__init__``
  which loader an iterator (and its fetcher, workers, pin thread) belongs to;
  the multi-process one hands workers a picklable ``WorkerInit`` in place of
  the loader's worker_init_fn while the workers are started
* ``_DatasetKind.create_fetcher``  instruments each fetcher it returns
  (``fetch`` and ``getitem`` records): the fetcher's ``fetch`` and
  ``collate_fn`` are timed by wrapping them on that instance, items by a
  transparent proxy of the dataset (map-style) or of the dataset iterator
  (iterable-style) held by that fetcher only
* ``_utils.pin_memory.pin_memory`` / ``_pin_memory_loop``  ``pin`` records
* subclasses defined later (``__init_subclass__`` of DataLoader and of
  _BaseDataLoaderIter): their own ``__init__``, ``__iter__`` and ``__next__``
  are wrapped the same way; of nested wrappers (a subclass calling its
  parent's) only the outermost records
"""

import atexit
import functools
import inspect
import json
import os
import sys
import threading
import weakref

from . import config as _config
from . import describe
from . import overrides as _overrides
from . import records as R
from .digest import batch_stats
from .records import S, dumps, emit, fail, guarded, now_ns


class _TLS(threading.local):
    loader = None        # loader whose batch this thread is producing (main __next__, pin thread)
    constructing = None  # loader whose iterator this thread is constructing
    # The object whose wrapped __init__ / __iter__ / __next__ this thread is inside: a subclass's
    # wrapper that calls its parent's reaches a second wrapper, which passes straight through.
    initing = None
    iterating = None
    nexting = None
    planning = False     # inside the overrides' trial constructions
    pending = None       # _Pending: overrides left for DataLoader.__init__ under a subclass's
    worker = None        # (loader, worker id) in a DataLoader worker
    pinning = False      # inside pin_memory (it recurses through itself)
    tname = None


_tls = _TLS()
_fault = None            # [where, countdown] from MMPROF_HOOK_TEST_FAULT
_max_batches = None
_stop_file = None
# The stop file is looked at most every _STOP_CHECK_NS (a stat per batch of a fast loader would
# be a syscall per step for nothing): the stop lands within that of being asked for.
_STOP_CHECK_NS = 50_000_000
_stop_checked_ns = 0
_stop_seen = False  # once the file was seen, every later followed __next__ stops
_by_id = {}              # id(loader) -> LoaderState
_next_lid = [0]
_lid_lock = threading.Lock()
_live_mp = weakref.WeakSet()   # multi-process iterators of this process
_ctxs = {}               # (loader, worker) -> _Ctx, per process
_patched = False


def _fault_hit(where):
    global _fault
    f = _fault
    if f is not None and f[0] == where:
        f[1] -= 1
        if f[1] <= 0:
            _fault = None
            raise RuntimeError("MMPROF_HOOK_TEST_FAULT: injected fault at %s" % where)


def _torch_version():
    t = sys.modules.get("torch")
    return str(getattr(t, "__version__", "?"))


# --------------------------------------------------------------------------
# loaders and iterators

class LoaderState:
    __slots__ = ("lid", "follow", "total", "epochs", "digest_left", "ref", "__weakref__")


class EpochState:
    __slots__ = ("ls", "epoch", "i")

    def __init__(self, ls, epoch):
        self.ls = ls
        self.epoch = epoch
        self.i = 0


def _state_of(loader):
    ls = _by_id.get(id(loader))
    if ls is not None and ls.ref() is loader:
        return ls
    return None


def _register(loader):
    with _lid_lock:
        lid = _next_lid[0]
        _next_lid[0] = lid + 1
    ls = LoaderState()
    ls.lid = lid
    ls.total = 0
    ls.epochs = 0
    ls.digest_left = S.cfg.digest_batches
    sel = S.cfg.loader
    if sel is None:
        ls.follow = True
    elif isinstance(sel, int):
        ls.follow = lid == sel
    else:
        ls.follow = describe.dataset_class(getattr(loader, "dataset", loader)) == sel
    key = id(loader)

    # The table is bound now: a loader held by a module global goes at interpreter shutdown,
    # after this module's globals were cleared.
    def _gone(ref, key=key, by_id=_by_id):
        cur = by_id.get(key)
        if cur is not None and cur.ref is ref:
            del by_id[key]

    ls.ref = weakref.ref(loader, _gone)
    _by_id[key] = ls
    return ls


def _on_loader(loader, t0, outcome, frame):
    if not S.versions_done:
        S.versions_done = True
        emit(dumps(describe.versions_record(now_ns)), now_ns())
    if not S.problems_done:
        S.problems_done = True
        for where, message in S.cfg.problems:
            R.problem(where, message)
        for name, measures, why in _missing:
            _partial(name, measures, why)
    if _fault is not None:
        _fault_hit("loader")
    ls = _register(loader)
    stack = describe.call_stack(type(loader), frame)
    ov = {"applied": {}, "rejected": {}}
    if outcome is not None:
        ov["applied"] = outcome.applied
        ov["rejected"] = outcome.rejected
        ov["original"] = outcome.original
    if _is_dali(loader):
        config = describe.dali_config(loader)
    elif _is_nodes(loader):
        config = describe.nodes_config(loader)
    else:
        config = describe.loader_config(loader)
    rec = {"t": "loader", "loader": ls.lid, "ns": t0,
           "origin": stack[0] if stack else None, "stack": stack,
           "config": config, "overrides": ov,
           "follow": ls.follow}
    emit(dumps(rec), now_ns())
    if not _optimizers_watched:
        _watch_optimizers()
    return ls


_optimizers = {}  # id(optimizer) -> its index in this process, in the order they first stepped
_optimizers_watched = False


def _optimizer_stepped(optimizer, args, kwargs):
    if not S.active:
        return
    try:
        k = _optimizers.setdefault(id(optimizer), len(_optimizers))
        t = now_ns()
        emit('{"t":"optim_step","opt":%d,"ns":%d}' % (k, t), t)
    except Exception as exc:
        fail("optim_step", exc)


def _watch_optimizers():
    """Every torch.optim optimizer step of the process (an ``optim_step`` record), through torch's
    global post-step hook (torch >= 2.0), so mmprof can tell batches per optimizer step (gradient
    accumulation). Registered after the first DataLoader's record, when torch is wholly
    imported."""
    global _optimizers_watched
    _optimizers_watched = True
    mod = sys.modules.get("torch.optim.optimizer")
    register = getattr(mod, "register_optimizer_step_post_hook", None)
    why = None
    if register is None:
        # torch 1.13 has none: gradient accumulation is then not detectable (not a partial hook:
        # no figure the hook promises is missing).
        why = ("torch.optim.optimizer has no register_optimizer_step_post_hook in this torch"
               if mod is not None else "torch.optim is not imported")
    else:
        register(_optimizer_stepped)
    emit(dumps({"t": "optim_watch", "available": why is None, "why": why, "ns": now_ns()}),
         now_ns())


def _construct(orig_init, base_cls, self, args, kwargs, ov):
    """Runs orig_init on self once, with the overrides `ov` torch accepts (docs/external-hook.md,
    "Overrides"); returns the plan (its outcome says what was applied), None without overrides."""
    plan = None
    if ov:
        _tls.planning = True  # trial objects of a subclass reach DataLoader.__init__ too
        try:
            plan = _overrides.plan(orig_init, base_cls, self, args, kwargs, ov,
                                   _torch_version(), describe.json_value)
        except Exception as exc:
            fail("loader.overrides", exc)
            plan = None
        finally:
            _tls.planning = False
    if plan is None or plan.args is None:
        orig_init(self, *args, **kwargs)
        return plan
    refused = None
    try:
        orig_init(*plan.args, **plan.kwargs)
    except Exception as exc:
        # Trials accepted what the real object refused.  If torch did
        # not get past its checks, construct as the caller asked
        # (outside this handler, so a failure reads as torch's own).
        if any(k.endswith("__initialized") for k in getattr(self, "__dict__", {})):
            raise
        refused = exc
    if refused is not None:
        plan.refused_on_real_object(refused)
        refused = None
        orig_init(self, *args, **kwargs)
    return plan


def _named_params(fn):
    try:
        ps = inspect.signature(inspect.unwrap(fn)).parameters.values()
    except (TypeError, ValueError):
        return set()
    return {p.name for p in ps if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}


class _Pending:
    """Overrides a DataLoader subclass's __init__ does not name, left for DataLoader.__init__
    (which the subclass's calls with super().__init__) to apply on the same object."""
    __slots__ = ("obj", "ov", "plan", "reached")

    def __init__(self, obj, ov):
        self.obj = obj
        self.ov = ov
        self.plan = None
        self.reached = False


def _merge(cls_name, outer, pending):
    """One outcome of the subclass's own overrides and those DataLoader.__init__ applied."""
    out = _overrides.Outcome()
    for plan in (outer, pending.plan if pending is not None else None):
        if plan is not None:
            out.applied.update(plan.outcome.applied)
            out.rejected.update(plan.outcome.rejected)
            out.original.update(plan.outcome.original)
    if pending is not None and not pending.reached:
        for k in pending.ov:
            out.rejected[k] = ("not a parameter of %s.__init__, which did not call "
                               "DataLoader.__init__" % cls_name)
    return out


def _make_init(orig_init, base_cls, subclass=False):
    """subclass: orig_init is a DataLoader subclass's own __init__, not DataLoader's."""
    @functools.wraps(orig_init)
    def __init__(self, *args, **kwargs):
        if not S.active or _tls.planning:
            return orig_init(self, *args, **kwargs)
        if _tls.initing is self:
            pending = _tls.pending
            if subclass or pending is None or pending.obj is not self or pending.reached:
                return orig_init(self, *args, **kwargs)
            pending.reached = True  # DataLoader.__init__ under a subclass's: its overrides
            pending.plan = _construct(orig_init, base_cls, self, args, kwargs, pending.ov)
            return None
        outer, outer_pending = _tls.initing, _tls.pending
        _tls.initing = self
        _tls.pending = None
        try:
            _init(self, args, kwargs)
        finally:
            _tls.initing = outer
            _tls.pending = outer_pending

    def _init(self, args, kwargs):
        t0 = now_ns()
        ov = S.cfg.overrides
        pending = None
        if ov and subclass:
            named = _named_params(orig_init)
            inner = {k: v for k, v in ov.items() if k not in named}
            ov = {k: v for k, v in ov.items() if k in named}
            if inner:
                pending = _tls.pending = _Pending(self, inner)
        plan = _construct(orig_init, base_cls, self, args, kwargs, ov)
        outcome = plan.outcome if plan is not None else None
        if pending is not None:
            outcome = _merge(base_cls.__name__, plan, pending)
        if S.active:
            guarded("loader", _on_loader, self, t0, outcome, sys._getframe(2))
    return __init__


def _begin_epoch(ls, it, t0, loader):
    if _fault is not None:
        _fault_hit("epoch")
    t1 = now_ns()
    d = getattr(it, "__dict__", None)
    reused = d is not None and d.get("_mmprof_ep") is not None
    ep = EpochState(ls, ls.epochs)
    ls.epochs += 1
    workers = []
    pin = None
    if d is not None:
        d["_mmprof_ep"] = ep
        d["_mmprof_ls"] = ls
        workers = d.get("_workers") or []
        if "_pin_memory" in d:
            pin = bool(d["_pin_memory"])
    pids = [getattr(w, "pid", None) for w in workers]
    emit(dumps({"t": "epoch", "loader": ls.lid, "epoch": ep.epoch, "ns": t0, "ready_ns": t1,
                "iterator": type(it).__name__, "worker_pids": pids, "reused": reused,
                "pin_memory": pin,
                "start_method": describe.effective_start_method(loader) if workers and loader is not None else None}),
         t1)
    return ep


def _reentrant_call(slot, obj, fn, *args, **kwargs):
    """fn(*args, **kwargs) with this thread's ``slot`` (iterating, initing) set to ``obj`` while
    it runs: a subclass's override calling its base's method on the same object is then not
    measured twice."""
    outer = getattr(_tls, slot)
    setattr(_tls, slot, obj)
    try:
        return fn(*args, **kwargs)
    finally:
        setattr(_tls, slot, outer)


def _make_iter(orig_iter):
    @functools.wraps(orig_iter)
    def __iter__(self):
        if not S.active or _tls.iterating is self:
            return orig_iter(self)
        ls = _state_of(self)
        if ls is None:
            return orig_iter(self)
        t0 = now_ns()
        it = _reentrant_call("iterating", self, orig_iter, self)
        if S.active:
            guarded("epoch", _begin_epoch, ls, it, t0, self)
        return it
    return __iter__


def _stop_requested(t0):
    global _stop_checked_ns, _stop_seen
    if _stop_seen or _stop_file is None or t0 - _stop_checked_ns < _STOP_CHECK_NS:
        return _stop_seen
    _stop_checked_ns = t0
    _stop_seen = os.path.exists(_stop_file)
    return _stop_seen


def _stop(ls, t0, reason):
    try:
        if not S.stopped:
            S.stopped = True
            emit(dumps({"t": "stop", "reason": reason, "loader": ls.lid,
                        "batches": ls.total, "ns": t0}), t0)
            # Ctrl-C would end the workers too: end them the graceful way so
            # their last records are written before the job goes down.
            _shutdown_live_iterators()
            R.flush()
    except Exception as exc:
        fail("stop", exc)
    # A planned stop looks planned: one line, no traceback, exit status 0 (SystemExit runs the
    # job's finally blocks and atexit handlers, and a launcher sees its rank succeed).
    try:
        sys.stderr.write("mmprof: stopped the job after %d batches: %s\n" % (
            ls.total, "the warm-up and steps mmprof was asked to measure (MMPROF_HOOK_MAX_"
            "BATCHES=%d)" % _max_batches if reason == "max_batches"
            else "mmprof asked it to stop (%s)" % _stop_file))
        sys.stderr.flush()
    except Exception:
        pass
    raise SystemExit(0)


def _batch(ep, ls, data, t0, t1):
    if _fault is not None:
        _fault_hit("batch")
    i = ep.i
    ep.i = i + 1
    n = ls.total
    ls.total = n + 1
    want = ls.digest_left > 0
    if want:
        ls.digest_left -= 1
    size, nbytes, dg, shapes = batch_stats(data, want, n == 0)
    t2 = now_ns()
    emit('{"t":"batch","loader":%d,"epoch":%d,"i":%d,"n":%d,"call_ns":%d,"ret_ns":%d,'
         '"size":%s,"bytes":%d,"digest":%s,%s"hook_ns":%d}'
         % (ls.lid, ep.epoch, i, n, t0, t1, "null" if size is None else int(size), nbytes,
            "null" if dg is None else '"%s"' % dg,
            "" if shapes is None else '"shapes":%s,' % json.dumps(shapes), t2 - t1), t2)


def _make_next(orig_next):
    @functools.wraps(orig_next)
    def __next__(self):
        if not S.active or _tls.nexting is self or _tls.initing is self:
            return orig_next(self)  # (a DALI iterator's __init__ fetches its first batch)
        d = getattr(self, "__dict__", None)
        ep = d.get("_mmprof_ep") if d is not None else None
        if ep is None:
            ls = d.get("_mmprof_ls") if d is not None else None
            if ls is None:
                return orig_next(self)
            try:  # an iterator made without DataLoader.__iter__
                ep = _begin_epoch(ls, self, now_ns(), ls.ref())
            except Exception as exc:
                fail("epoch", exc)
                return orig_next(self)
        ls = ep.ls
        t0 = now_ns()
        if ls.follow:
            if _max_batches is not None and ls.total >= _max_batches:
                _stop(ls, t0, "max_batches")
            elif _stop_requested(t0):
                _stop(ls, t0, "requested")
        tls = _tls
        prev = tls.loader
        tls.loader = ls.lid
        outer = tls.nexting
        tls.nexting = self
        try:
            data = orig_next(self)
        except StopIteration:
            tls.nexting = outer
            tls.loader = prev
            if S.active:
                try:
                    t1 = now_ns()
                    emit('{"t":"epoch_end","loader":%d,"epoch":%d,"ns":%d,"call_ns":%d,"batches":%d}'
                         % (ls.lid, ep.epoch, t1, t0, ep.i), t1)
                except Exception as exc:
                    fail("epoch_end", exc)
            raise
        except BaseException:
            tls.nexting = outer
            tls.loader = prev
            raise
        tls.nexting = outer
        tls.loader = prev
        t1 = now_ns()
        if S.active:
            try:
                _batch(ep, ls, data, t0, t1)
            except Exception as exc:
                fail("batch", exc)
        return data
    return __next__


def _enter_worker(loader, worker_id, main_pid):
    """The first thing a loader's worker does: it says which loader it serves (a worker process
    starts its records' section; a worker thread of the main process marks its thread)."""
    if not S.active:
        return
    try:
        _tls.worker = (loader, worker_id)
        if os.getpid() != main_pid:
            R.become_worker(loader, worker_id, main_pid)
            S.watch = _stuck_check  # its flush thread watches its fetches
        else:  # a worker thread of the main process (newer torch)
            _tls.loader = loader
        if _fault is not None:
            _fault_hit("worker_init")
    except Exception as exc:
        fail("worker_init", exc)


class _WorkerEntry:
    """What a loader's worker runs first, standing in for a function of the loader's: it tells
    the worker which loader it serves (of which main process), then runs the function it wraps.
    Picklable: spawn / forkserver pickle it like the function it stands in for."""

    __slots__ = ("loader", "mmprof_wrapped_fn", "main_pid")

    def __init__(self, loader, fn, main_pid):
        self.loader = loader
        self.mmprof_wrapped_fn = fn
        self.main_pid = main_pid

    def __reduce__(self):
        return (type(self), (self.loader, self.mmprof_wrapped_fn, self.main_pid))


class WorkerInit(_WorkerEntry):
    """Stands in for the loader's worker_init_fn while its workers start: calls the user's
    function, if any, exactly as torch would have."""

    __slots__ = ()

    def __call__(self, worker_id):
        _enter_worker(self.loader, worker_id, self.main_pid)
        fn = self.mmprof_wrapped_fn
        if fn is not None:
            return fn(worker_id)
        return None


def _make_iter_init(orig, multiprocess):
    """multiprocess: whether the iterator starts workers; None: when its loader has workers
    (an iterator class of a DataLoader subclass, e.g. torchdata's)."""
    @functools.wraps(orig)
    def __init__(self, loader, *args, **kwargs):
        d = getattr(self, "__dict__", None)
        if not S.active or d is None or "_mmprof_ls" in d:
            return orig(self, loader, *args, **kwargs)
        if multiprocess is None:
            multi = (getattr(loader, "num_workers", 0) or 0) > 0
        else:
            multi = multiprocess
        ls = None
        prev = None
        swapped = False
        user_fn = None
        try:
            ls = _state_of(loader)
            if ls is not None:
                self.__dict__["_mmprof_ls"] = ls
                prev = _tls.constructing
                _tls.constructing = ls.lid
                if multi:
                    _live_mp.add(self)
        except Exception as exc:
            fail("iterator", exc)
        if ls is not None and multi and S.active:
            try:
                user_fn = loader.worker_init_fn
                loader.worker_init_fn = WorkerInit(ls.lid, user_fn, os.getpid())
                swapped = True
            except Exception:
                swapped = False  # workers will not know their loader; no worker records
        try:
            return orig(self, loader, *args, **kwargs)
        finally:
            if ls is not None:
                try:
                    _tls.constructing = prev
                    if swapped:
                        loader.worker_init_fn = user_fn
                except Exception:
                    pass
    return __init__


def _shutdown_live_iterators():
    for it in list(_live_mp):
        d = getattr(it, "__dict__", None) or {}
        if d.get("_shutdown", True) or not d.get("_workers"):
            continue
        sd = getattr(it, "_shutdown_workers", None)
        if sd is None:
            continue
        try:
            sd()
        except Exception:
            pass  # torch's own shutdown trouble is not ours to report


# --------------------------------------------------------------------------
# fetchers (worker processes, or the main process when num_workers=0)

class _Ctx:
    # parts: {stage: ns} of the item being timed (None outside a timed item: _Part falls through)
    # fetch: (start_ns, its indices) of the fetch in progress, None between fetches; item: the
    # index __getitem__ is on (the watchdog names both when a fetch takes too long)
    __slots__ = ("lid", "wid", "pid", "every", "count", "size", "collate_ns", "parts", "fetch",
                 "item", "stuck_told")


def _ctx_for(lid, wid):
    c = _ctxs.get((lid, wid))
    if c is None:
        c = _Ctx()
        c.lid = lid
        c.wid = wid
        c.pid = os.getpid()
        c.every = S.cfg.getitem_every
        c.count = 0
        c.size = None
        c.collate_ns = 0
        c.parts = None
        c.fetch = None
        c.item = None
        c.stuck_told = None
        _ctxs[(lid, wid)] = c
    return c


def _jidx(idx):
    if isinstance(idx, int) and not isinstance(idx, bool):
        return str(idx)
    try:
        import numbers
        if isinstance(idx, numbers.Integral):
            return str(int(idx))
    except Exception:
        pass
    if isinstance(idx, str):
        return dumps(idx)
    return dumps(describe.short_repr(idx, 200))


def _getitem_record(c, idx, t0, t1, items=None, parts=None):
    if _fault is not None:
        _fault_hit("getitem")
    tail = "" if items is None else ',"items":%d' % items
    if parts:
        tail += ',"parts":' + dumps(parts)
    emit('{"t":"getitem","loader":%d,"worker":%d,"index":%s,"start_ns":%d,"dur_ns":%d,"every":%d%s}'
         % (c.lid, c.wid, _jidx(idx), t0, t1 - t0, c.every, tail), t1)


def _item_failed(c, key, where, exc):
    """The dataset raised for an item: which one (its index, a __getitems__ call's indices, or
    an iterable's position in this worker), written at once, so the exception the job ends with
    (torch re-raises a worker's in the main process, without the index) can name it."""
    try:
        kind = type(exc)
        emit('{"t":"item_error","loader":%d,"worker":%d,"%s":%s,"type":%s,"message":%s,"ns":%d}'
             % (c.lid, c.wid, key, where, dumps(kind.__qualname__), dumps(str(exc)[:500]),
                now_ns()), 0)
        R.flush()
    except Exception as inner:
        fail("item_error", inner)


class _Part:
    """One stage inside a torchvision dataset's __getitem__: its loader (the file's read and
    decode, "decode") or one transform of its Compose (named by its class), in place of the
    original on that dataset in this process. Timed on the items TimedMap times (ctx.parts is a
    dict then), a plain call otherwise; everything else is the original's."""

    __slots__ = ("_mm_fn", "_mm_name", "_mm_ctx")

    def __init__(self, fn, name, ctx):
        self._mm_fn = fn
        self._mm_name = name
        self._mm_ctx = ctx

    def __call__(self, *args, **kwargs):
        parts = self._mm_ctx.parts
        if parts is None:
            return self._mm_fn(*args, **kwargs)
        t0 = now_ns()
        r = self._mm_fn(*args, **kwargs)
        parts[self._mm_name] = parts.get(self._mm_name, 0) + now_ns() - t0
        return r

    def __getattr__(self, name):
        if name.startswith("_mm_"):
            raise AttributeError(name)
        return getattr(self._mm_fn, name)

    def __repr__(self):
        return repr(self._mm_fn)

    def __str__(self):
        return str(self._mm_fn)


def _torchvision_dataset(ds):
    """The torchvision dataset (ImageFolder, CIFAR10, a subclass) under a map-style dataset, looking
    through wrappers such as Subset (.dataset), or None."""
    for _ in range(4):
        if ds is None:
            return None
        if any((getattr(k, "__module__", "") or "").startswith("torchvision.datasets")
               for k in getattr(type(ds), "__mro__", ())):
            return ds
        ds = getattr(ds, "dataset", None)
    return None


def _part_name(fn):
    """A transform's name: a function's own, else its class's (Resize, ToTensor)."""
    name = getattr(fn, "__name__", None)
    return name if isinstance(name, str) else type(fn).__name__


def _instrument_parts(ds, c):
    """Times a torchvision dataset's loader and transforms inside __getitem__ (docs/external-hook.md,
    "Stages inside __getitem__"): the loader as "decode", each transform of a torchvision Compose
    (else the transform itself) by its class or function name, a repeated name numbered."""
    target = _torchvision_dataset(ds)
    if target is None:
        return
    d = getattr(target, "__dict__", {})
    loader = d.get("loader")
    if callable(loader) and not isinstance(loader, _Part):
        d["loader"] = _Part(loader, "decode", c)
    tf = d.get("transform")
    if tf is None or isinstance(tf, _Part):
        return
    inner = getattr(tf, "transforms", None)
    compose = (type(tf).__name__ == "Compose" and isinstance(inner, list)
               and (type(tf).__module__ or "").startswith("torchvision.transforms"))
    if not compose:
        d["transform"] = _Part(tf, _part_name(tf), c)
        return
    if any(isinstance(t, _Part) for t in inner):
        return
    seen = {}
    wrapped = []
    for t in inner:
        name = _part_name(t)
        seen[name] = seen.get(name, 0) + 1
        wrapped.append(_Part(t, name if seen[name] == 1 else "%s#%d" % (name, seen[name]), c))
    tf.transforms = wrapped  # a new list: another Compose sharing the old one keeps it


class TimedMap:
    """Transparent stand-in for a map-style dataset inside one fetcher."""

    __slots__ = ("_mm_ds", "_mm_ctx")

    def __init__(self, ds, ctx):
        self._mm_ds = ds
        self._mm_ctx = ctx

    def __getitem__(self, idx):
        c = self._mm_ctx
        c.item = idx
        every = c.every
        if not every or not S.active:
            return self._mm_ds[idx]
        n = c.count
        if n % every:
            try:
                item = self._mm_ds[idx]
            except Exception as exc:
                _item_failed(c, "index", _jidx(idx), exc)
                raise
            c.count = n + 1
            return item
        c.parts = {}
        t0 = now_ns()
        try:
            item = self._mm_ds[idx]
        except Exception as exc:
            _item_failed(c, "index", _jidx(idx), exc)
            raise
        finally:
            t1 = now_ns()
            parts, c.parts = c.parts, None
        c.count = n + 1
        try:
            _getitem_record(c, idx, t0, t1, None, parts)
        except Exception as exc:
            fail("getitem", exc)
        return item

    def __len__(self):
        return len(self._mm_ds)

    def __getattr__(self, name):
        if name.startswith("_mm_"):
            raise AttributeError(name)
        return getattr(self._mm_ds, name)


class TimedMapBatched(TimedMap):
    """For datasets with __getitems__: one record per __getitems__ call."""

    __slots__ = ()

    def __getitems__(self, indices):
        c = self._mm_ctx
        get = self._mm_ds.__getitems__
        every = c.every
        if not every or not S.active:
            return get(indices)
        n = c.count
        if n % every:
            try:
                items = get(indices)
            except Exception as exc:
                _item_failed(c, "indices", _jidx(indices), exc)
                raise
            c.count = n + 1
            return items
        c.parts = {}
        t0 = now_ns()
        try:
            items = get(indices)
        except Exception as exc:
            _item_failed(c, "indices", _jidx(indices), exc)
            raise
        finally:
            t1 = now_ns()
            parts, c.parts = c.parts, None
        c.count = n + 1
        try:
            first = indices[0] if len(indices) else None
            _getitem_record(c, first, t0, t1, len(indices), parts)
        except Exception as exc:
            fail("getitem", exc)
        return items


class TimedIter:
    """Transparent stand-in for an iterable-style dataset's iterator."""

    __slots__ = ("_mm_it", "_mm_ctx")

    def __init__(self, it, ctx):
        self._mm_it = it
        self._mm_ctx = ctx

    def __iter__(self):
        return self

    def __next__(self):
        c = self._mm_ctx
        every = c.every
        if not every or not S.active:
            return next(self._mm_it)
        n = c.count
        timed = not n % every
        if timed:
            t0 = now_ns()
        try:
            item = next(self._mm_it)
        except StopIteration:
            raise
        except Exception as exc:
            _item_failed(c, "position", str(n), exc)
            raise
        if not timed:
            c.count = n + 1
            return item
        t1 = now_ns()
        c.count = n + 1
        try:
            _getitem_record(c, n, t0, t1)
        except Exception as exc:
            fail("getitem", exc)
        return item

    def __getattr__(self, name):
        if name.startswith("_mm_"):
            raise AttributeError(name)
        return getattr(self._mm_it, name)


class _TimedCall:
    """A callable of a worker's fetcher, timed: the function, the worker's context, and whether
    the loader batches automatically (the batch's size is then the collated data's length)."""
    __slots__ = ("fn", "ctx", "auto")

    def __init__(self, fn, ctx, auto):
        self.fn = fn
        self.ctx = ctx
        self.auto = auto


class TimedCollate(_TimedCall):
    __slots__ = ()

    def __call__(self, data):
        if not S.active:
            return self.fn(data)
        t0 = now_ns()
        r = self.fn(data)
        t1 = now_ns()
        c = self.ctx
        c.collate_ns = t1 - t0
        if self.auto:
            try:
                c.size = len(data)
            except Exception:
                pass
        return r


class TimedFetch(_TimedCall):
    __slots__ = ()

    def __call__(self, possibly_batched_index):
        if not S.active:
            return self.fn(possibly_batched_index)
        c = self.ctx
        c.size = None
        c.collate_ns = 0
        t0 = now_ns()
        c.fetch = (t0, possibly_batched_index)
        c.item = None
        try:
            data = self.fn(possibly_batched_index)
        finally:
            c.fetch = None
        t1 = now_ns()
        try:
            if _fault is not None:
                _fault_hit("fetch")
            size = c.size if self.auto else 1
            emit('{"t":"fetch","loader":%d,"worker":%d,"pid":%d,"start_ns":%d,"end_ns":%d,'
                 '"size":%s,"collate_ns":%d}'
                 % (c.lid, c.wid, c.pid, t0, t1, "null" if size is None else int(size),
                    c.collate_ns), t1)
        except Exception as exc:
            fail("fetch", exc)
        return data


def _stuck_check(now):
    """Run by a worker's flush thread: a fetch in progress for MMPROF_HOOK_STUCK_S or more is
    reported once, with its worker, its indices and the item __getitem__ is on (DataLoader's own
    timeout, which would raise, is off by default: a job waits for ever)."""
    for c in list(_ctxs.values()):
        fetch = c.fetch
        if fetch is None or now - fetch[0] < S.cfg.stuck_ns or c.stuck_told == fetch[0]:
            continue
        c.stuck_told = fetch[0]
        emit(dumps({"t": "stuck", "loader": c.lid, "worker": c.wid, "pid": c.pid,
                    "since_ns": fetch[0], "ns": now, "indices": describe.json_value(fetch[1])
                    if not isinstance(fetch[1], (list, tuple)) else
                    [describe.json_value(i) for i in fetch[1]],
                    "item": None if c.item is None else describe.json_value(c.item)}), now)
        R.flush(False)


def _instrument_fetcher(f, lid, wid):
    d = getattr(f, "__dict__", None)
    if d is None or not callable(getattr(f, "fetch", None)):
        _partial_once("fetcher " + type(f).__name__, "the fetch, collate and __getitem__ times",
                      "it has no fetch method or no instance attributes")
        return
    if "fetch" in d:
        return
    c = _ctx_for(lid, wid)
    auto = bool(d.get("auto_collation", True))
    if "collate_fn" in d:
        d["collate_fn"] = TimedCollate(d["collate_fn"], c, auto)
    if "dataset_iter" in d:
        d["dataset_iter"] = TimedIter(d["dataset_iter"], c)
    elif "dataset" in d:
        ds = d["dataset"]
        try:
            batched = bool(getattr(ds, "__getitems__", None))
        except Exception:
            batched = False
        d["dataset"] = (TimedMapBatched if batched else TimedMap)(ds, c)
        _instrument_parts(ds, c)
    else:
        _partial_once("fetcher " + type(f).__name__, "__getitem__ times",
                      "it holds neither dataset nor dataset_iter")
    if "collate_fn" not in d:
        _partial_once("fetcher " + type(f).__name__ + ".collate_fn", "collate times",
                      "it holds no collate_fn")
    d["fetch"] = TimedFetch(f.fetch, c, auto)


def _make_create_fetcher(orig):
    @functools.wraps(orig)
    def create_fetcher(*args, **kwargs):
        f = orig(*args, **kwargs)
        if S.active:
            try:
                w = _tls.worker
                if w is not None:
                    lid, wid = w
                else:
                    lid, wid = _tls.constructing, -1
                if lid is not None:
                    _instrument_fetcher(f, lid, wid)
            except Exception as exc:
                fail("fetcher", exc)
        return f
    return staticmethod(create_fetcher)


# --------------------------------------------------------------------------
# NVIDIA DALI: its framework iterators (DALIGenericIterator) are the job's loader, not a DataLoader.
# The iterator is loader and iterator at once: __init__ records the loader, __next__ is timed by
# the same wrapper as a DataLoader iterator's (batch, epoch_end, the stop), reset() ends the
# epoch so the next __next__ starts another. DALI's threads run inside this process: no workers.

_dali_base = None


def _is_dali(obj):
    return _dali_base is not None and isinstance(obj, _dali_base)


def _make_library_init(orig_init, first_epoch, outcome_of=None):
    """__init__ of a loader that is not a DataLoader (a DALI iterator, a torchdata.nodes Loader):
    records the loader with outcome_of(self), the overrides' outcome; first_epoch: its
    construction begins its first epoch (a DALI iterator fetches its first batch there)."""
    @functools.wraps(orig_init)
    def __init__(self, *args, **kwargs):
        if not S.active or _tls.initing is self:
            return orig_init(self, *args, **kwargs)
        t0 = now_ns()
        _reentrant_call("initing", self, orig_init, self, *args, **kwargs)
        if S.active:
            try:
                outcome = outcome_of(self) if outcome_of is not None else None
                ls = _on_loader(self, t0, outcome, sys._getframe(1))
                if first_epoch:
                    # The time to the first batch counts the construction, which built the
                    # pipeline and fetched the first batch.
                    _begin_epoch(ls, self, t0, self)
            except Exception as exc:
                fail("loader", exc)
        return None
    return __init__


def _make_dali_reset(orig_reset):
    @functools.wraps(orig_reset)
    def reset(self, *args, **kwargs):
        d = getattr(self, "__dict__", None)
        if d is not None:
            d.pop("_mmprof_ep", None)
        return orig_reset(self, *args, **kwargs)
    return reset


# The DataLoader settings a DALI pipeline has (docs/external-hook.md, "Overrides"): its CPU
# threads stand where a DataLoader's workers do, its prefetch queue where the prefetch factor.
_DALI_ARGS = {"num_workers": "num_threads", "prefetch_factor": "prefetch_queue_depth",
              "batch_size": "batch_size"}


def _make_dali_pipeline_init(orig_init):
    """Pipeline.__init__ with MMPROF_HOOK_OVERRIDES' DataLoader keys in DALI's names; the
    outcome is kept on the pipeline for its iterator's loader record. DALI decides what is valid:
    a construction it refuses with the overrides is made again with the caller's arguments."""
    try:
        sig = inspect.signature(orig_init)
    except (TypeError, ValueError):
        sig = None
    names = list(sig.parameters)[1:] if sig is not None else []

    @functools.wraps(orig_init)
    def __init__(self, *args, **kwargs):
        ov = S.cfg.overrides if S.active else None
        if not ov:
            return orig_init(self, *args, **kwargs)
        outcome = _overrides.Outcome()
        if len(args) > len(names):
            return orig_init(self, *args, **kwargs)  # DALI's own error, as without the hook
        given = dict(zip(names, args))
        given.update(kwargs)
        mine = dict(given)  # every argument by keyword: the same call for DALI
        for key, value in ov.items():
            arg = _DALI_ARGS.get(key)
            if arg is None:
                outcome.rejected[key] = "a DALI pipeline has no such setting (it takes %s)" % (
                    ", ".join("loader.%s as %s" % kv for kv in _DALI_ARGS.items()))
            elif key == "num_workers" and (not isinstance(value, int) or value < 1):
                outcome.rejected[key] = "a DALI pipeline needs num_threads >= 1, not %r" % (value,)
            else:
                outcome.original[key] = describe.json_value(given.get(arg))
                outcome.applied[key] = value
                mine[arg] = value
        if not outcome.applied:
            orig_init(self, *args, **kwargs)
        else:
            _dali_construct(orig_init, self, args, kwargs, mine, outcome)
        try:
            self.__dict__["_mmprof_overrides"] = outcome
        except Exception:
            pass
        return None
    if sig is not None:
        # pipeline_def sorts its keyword arguments by Pipeline.__init__'s own parameters
        # (inspect.getfullargspec, which does not follow __wrapped__).
        __init__.__signature__ = sig
    return __init__


def _dali_construct(orig_init, self, args, kwargs, mine, outcome):
    """With the overrides; if DALI refuses them, as the caller asked (outside the handler, so
    a failure then reads as DALI's own)."""
    try:
        orig_init(self, **mine)
        return
    except Exception as exc:
        why = "refused by DALI: %s: %s" % (type(exc).__name__, exc)
    for key in list(outcome.applied):
        del outcome.applied[key]
        outcome.rejected[key] = why
    orig_init(self, *args, **kwargs)


def _dali_outcome(it):
    """The overrides' outcome of a DALI iterator's first pipeline, None without overrides."""
    pipes = getattr(it, "_pipes", None) or []
    return getattr(pipes[0], "__dict__", {}).get("_mmprof_overrides") if pipes else None


def patch_dali(mod):
    """Patch the freshly executed nvidia.dali.plugin.pytorch module (torch's DataLoader module,
    which it imports first, started the hook)."""
    global _dali_base
    if not S.active:
        return
    if S.cfg.overrides:
        pipeline = getattr(sys.modules.get("nvidia.dali.pipeline"), "Pipeline", None)
        if isinstance(pipeline, type):
            _wrap_method(pipeline, "Pipeline", "__init__", _make_dali_pipeline_init,
                         "the overrides of a DALI pipeline's settings")
        else:
            _partial("nvidia.dali.pipeline.Pipeline", "the overrides of a DALI pipeline's settings",
                     "not in this DALI")
    base = getattr(sys.modules.get("nvidia.dali.plugin.base_iterator"), "_DaliBaseIterator", None)
    if not isinstance(base, type):
        _partial("nvidia.dali.plugin.base_iterator._DaliBaseIterator",
                 "the DALI iterator's configuration, batches and waits", "not in this DALI")
        return
    _dali_base = base
    _wrap_method(base, "_DaliBaseIterator", "reset", _make_dali_reset, "DALI's epochs")
    for name in ("DALIGenericIterator", "DALIRaggedIterator"):
        cls = getattr(mod, name, None)
        # Its own __init__, not the base's: it fetches the first batch itself after the base's
        # (prepare_first_batch), and that fetch is part of constructing the loader.
        _wrap_method(cls, name, "__init__",
                     lambda orig: _make_library_init(orig, True, _dali_outcome),
                     "the DALI iterator's configuration (it is not followed without it)")
        _wrap_method(cls, name, "__next__", _make_next,
                     "each DALI batch's wait, hence the stall and the step time")


# --------------------------------------------------------------------------
# torchdata.nodes: a graph of nodes read through a Loader, not a DataLoader. Loader.__init__
# records the loader, Loader.__iter__ begins an epoch (it resets the same LoaderIterator each
# time), LoaderIterator.__next__ is timed by the DataLoader iterator's wrapper; its has_next()
# looks one item ahead through __next__, which is not a batch the job took.

_nodes_loader = None
_nodes_loaders = weakref.WeakSet()  # the Loaders recorded (_nodes_outcome)


def _is_nodes(obj):
    return _nodes_loader is not None and isinstance(obj, _nodes_loader)


def _make_has_next(orig):
    @functools.wraps(orig)
    def has_next(self):
        outer = _tls.nexting
        _tls.nexting = self
        try:
            return orig(self)
        finally:
            _tls.nexting = outer
    return has_next


# The DataLoader keys a graph's nodes take (docs/external-hook.md, "Overrides"): the loading
# ParallelMapper's (the one with the most workers), the first Batcher's, the first Prefetcher's.
_NODE_KEYS = {"num_workers": "ParallelMapper", "in_order": "ParallelMapper",
              "multiprocessing_context": "ParallelMapper", "batch_size": "Batcher",
              "drop_last": "Batcher", "prefetch_factor": "Prefetcher"}
_NODE_KEYS_TEXT = ("num_workers, in_order and multiprocessing_context of its loading "
                   "ParallelMapper, batch_size and drop_last of a Batcher, prefetch_factor of a "
                   "Prefetcher")


def _mapper_impl(mapper):
    """The _ParallelMapperImpl a ParallelMapper made at construction (behind an Unbatcher when it
    pre-batches): it holds the settings its reset reads."""
    impl = getattr(mapper, "_it", None)
    if type(impl).__name__ == "Unbatcher":
        impl = getattr(impl, "source", None)
    return impl if type(impl).__name__ == "_ParallelMapperImpl" else None


def _node_override(nodes, key, value):
    """Applies one override to the graph's node that holds it: (previous value, None), or
    (None, why it was refused). The checks are the nodes' own (their constructors' errors)."""
    cls = _NODE_KEYS.get(key)
    if cls is None:
        extra = (": the hook adds no node, so add a PinMemory node to the graph"
                 if key == "pin_memory" else "")
        return None, ("a torchdata.nodes graph has no node that takes loader.%s (its nodes take "
                      "%s)%s" % (key, _NODE_KEYS_TEXT, extra))
    if cls == "ParallelMapper":
        node = describe.loading_mapper(nodes)
    else:
        node = next((n for n in nodes if type(n).__name__ == cls), None)
    if node is None:
        return None, "the job's torchdata.nodes graph has no %s node" % cls
    targets = [node]
    if cls == "ParallelMapper":
        impl = _mapper_impl(node)
        if impl is None:
            return None, ("this torchdata's ParallelMapper keeps its settings where the hook "
                          "cannot reach them")
        targets.append(impl)
        processes = getattr(node, "method", None) == "process"
        if key != "in_order" and not processes:
            return None, ("its loading ParallelMapper runs threads (method='thread'), and "
                          "loader.%s sets a process mapper's worker processes" % key)
    if key in ("in_order", "drop_last"):
        if not isinstance(value, bool):
            return None, "%s takes true or false, not %r" % (key, value)
    elif key == "multiprocessing_context":
        try:
            import torch.multiprocessing as tmp
            ctx = tmp.get_context(value)
        except Exception as exc:
            return None, _overrides._message(exc)
    else:
        least = 0 if key == "num_workers" else 1
        if not isinstance(value, int) or isinstance(value, bool) or value < least:
            return None, "%s %s needs an integer >= %d, not %r" % (cls, key, least, value)
        cap = getattr(node, "max_concurrent", None)
        if key == "num_workers" and isinstance(cap, int) and value > 0 and cap > value:
            return None, ("ParallelMapper refuses max_concurrent=%d > num_workers=%d"
                          % (cap, value))
    before = describe.json_value(getattr(node, key, None))
    if key == "multiprocessing_context":
        before = describe.context_name(getattr(node, key, None))
    for t in targets:
        setattr(t, key, value)
    if key == "multiprocessing_context":
        targets[1]._mp_context = ctx
    return before, None


def _nodes_outcome(loader):
    """MMPROF_HOOK_OVERRIDES applied to the nodes of a just-constructed torchdata.nodes Loader
    (before its first reset, which reads them); a key no node takes is refused, saying why. The
    loader is kept (weakly) for its mappers' workers to find it."""
    _nodes_loaders.add(loader)
    ov = S.cfg.overrides
    if not ov:
        return None
    out = _overrides.Outcome()
    nodes = describe.nodes_of(loader)
    for key, value in ov.items():
        before, why = _node_override(nodes, key, value)
        if why is not None:
            out.rejected[key] = why
        else:
            out.original[key] = before
            out.applied[key] = value
    return out


class NodesWorker(_WorkerEntry):
    """Stands in for torchdata.nodes' _apply_udf as the target of a process ParallelMapper's
    worker while the mapper starts them: runs the mapper's own loop."""

    __slots__ = ()

    def __call__(self, worker_id, *args, **kwargs):
        _enter_worker(self.loader, worker_id, self.main_pid)
        if S.active:
            R.announce()
        return self.mmprof_wrapped_fn(worker_id, *args, **kwargs)


def _graph_loader(source):
    """The followed torchdata.nodes Loader whose graph holds ``source`` (a mapper's source
    node), or None. A graph is reset from a Prefetcher's thread too, so no thread-local state
    can say which Loader resets it."""
    for loader in list(_nodes_loaders):
        if any(n is source for n in describe.nodes_of(loader)):
            return loader
    return None


def _make_nodes_mapper_init(module):
    """_ParallelMapperIter.__init__, which starts a mapper's workers: a process mapper of a
    followed Loader starts them through a NodesWorker."""
    def make(orig):
        @functools.wraps(orig)
        def __init__(self, *args, **kwargs):
            ls = None
            if S.active and kwargs.get("method") == "process":
                try:
                    ls = _state_of(_graph_loader(kwargs.get("source")))
                except Exception as exc:
                    fail("nodes_workers", exc)
            target = getattr(module, "_apply_udf", None)
            if ls is None or target is None or isinstance(target, NodesWorker):
                return orig(self, *args, **kwargs)
            module._apply_udf = NodesWorker(ls.lid, target, os.getpid())
            try:
                return orig(self, *args, **kwargs)
            finally:
                module._apply_udf = target
        return __init__
    return make


def patch_nodes(mod):
    """Patch the freshly executed torchdata.nodes.loader module."""
    global _nodes_loader
    if not S.active:
        return
    loader = getattr(mod, "Loader", None)
    it = getattr(mod, "LoaderIterator", None)
    base = getattr(sys.modules.get("torchdata.nodes.base_node"), "BaseNode", None)
    if not all(isinstance(c, type) for c in (loader, it, base)) or "__next__" not in base.__dict__:
        _partial("torchdata.nodes.Loader", "the torchdata.nodes loader's configuration, batches "
                 "and waits", "Loader, LoaderIterator or BaseNode.__next__ not in this torchdata")
        return
    _nodes_loader = loader
    _wrap_method(loader, "torchdata.nodes.Loader", "__init__",
                 lambda orig: _make_library_init(orig, False, _nodes_outcome),
                 "the torchdata.nodes loader's configuration (it is not followed without it)")
    _wrap_method(loader, "torchdata.nodes.Loader", "__iter__", _make_iter,
                 "the start of each epoch of a torchdata.nodes loader")
    # Its own __next__ (BaseNode's), so the graph's other nodes are not timed as batches.
    it.__next__ = _make_next(base.__dict__["__next__"])
    _wrap_method(it, "torchdata.nodes.LoaderIterator", "has_next", _make_has_next,
                 "a torchdata.nodes loader's look-ahead, which is not a batch")
    mapper_mod = sys.modules.get("torchdata.nodes.map")
    mapper_iter = getattr(mapper_mod, "_ParallelMapperIter", None)
    if isinstance(mapper_iter, type) and callable(getattr(mapper_mod, "_apply_udf", None)):
        _wrap_method(mapper_iter, "torchdata.nodes.map._ParallelMapperIter", "__init__",
                     _make_nodes_mapper_init(mapper_mod),
                     "which processes are a process ParallelMapper's workers (their memory)")
    else:
        _partial("torchdata.nodes.map._ParallelMapperIter",
                 "which processes are a process ParallelMapper's workers (their memory)",
                 "_ParallelMapperIter or _apply_udf not in this torchdata")


# --------------------------------------------------------------------------
# pinning

def _make_pin(orig_pin):
    @functools.wraps(orig_pin)
    def pin_memory(data, *args, **kwargs):
        t = _tls
        if t.pinning or t.loader is None or not S.active:
            return orig_pin(data, *args, **kwargs)
        t.pinning = True
        t0 = now_ns()
        try:
            r = orig_pin(data, *args, **kwargs)
        finally:
            t.pinning = False
        t1 = now_ns()
        try:
            name = t.tname
            if name is None:
                name = t.tname = threading.current_thread().name
            if _fault is not None:
                _fault_hit("pin")
            emit('{"t":"pin","loader":%d,"start_ns":%d,"end_ns":%d,"thread":%s}'
                 % (t.loader, t0, t1, dumps(name)), t1)
        except Exception as exc:
            fail("pin", exc)
        return r
    return pin_memory


def _make_pin_loop(orig_loop):
    try:
        sig = inspect.signature(orig_loop)
    except (TypeError, ValueError):
        sig = None

    @functools.wraps(orig_loop)
    def _pin_memory_loop(*args, **kwargs):
        if S.active and sig is not None:
            try:
                done = sig.bind(*args, **kwargs).arguments.get("done_event")
                if done is not None:
                    for it in list(_live_mp):
                        d = getattr(it, "__dict__", {})
                        if d.get("_pin_memory_thread_done_event") is done:
                            _tls.loader = d["_mmprof_ls"].lid
                            break
            except Exception as exc:
                fail("pin_loop", exc)
        return orig_loop(*args, **kwargs)
    return _pin_memory_loop


# --------------------------------------------------------------------------
# process life

def _after_fork():
    _tls.loader = None
    _tls.constructing = None
    _tls.worker = None
    _tls.pinning = False
    _tls.tname = None
    _ctxs.clear()
    # The parent's iterators are not this process's to shut down.
    for it in list(_live_mp):
        _live_mp.discard(it)


def _at_exit():
    # Registered after multiprocessing.util's and torch's own exit handlers,
    # so it runs before them: workers still alive (persistent workers, an
    # iterator left mid-epoch) are ended the way torch ends them when an
    # iterator is deleted, which lets them write their last records.
    try:
        if S.active:
            _shutdown_live_iterators()
    except Exception as exc:
        fail("atexit", exc)
    R.flush()


# What a torch lacks (or has with a signature the wrappers do not know), recorded before the
# first loader as one ``partial`` record each: the figures that depend on it are missing from
# the run, said so instead of measured wrong.  (name, what it measures, why)
_missing = []
_partial_seen = set()  # names reported at run time in this process


def _partial(name, measures, why):
    emit(dumps({"t": "partial", "what": name, "measures": measures, "why": why,
                "ns": now_ns()}), now_ns())


def _partial_once(name, measures, why):
    """A shape found only when torch runs (a fetcher without the attributes the wrappers
    time): one ``partial`` record per name and process."""
    if name not in _partial_seen:
        _partial_seen.add(name)
        _partial(name, measures, why)


def _params(fn):
    try:
        return list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return None


_unpatched = set()  # MMPROF_HOOK_TEST_UNPATCHED: names left alone as if this torch lacked them


def _own(cls, cls_name, name):
    if cls is None or "%s.%s" % (cls_name, name) in _unpatched:
        return None
    return cls.__dict__.get(name)


def _wrap_method(cls, cls_name, name, make, measures, params=None):
    """Replaces cls.name by make(original); a missing class or method, or a signature whose
    first parameters are not ``params``, is recorded in _missing and left alone."""
    target = "%s.%s" % (cls_name, name)
    orig = _own(cls, cls_name, name)
    if orig is None:
        _missing.append((target, measures, "not in this torch"))
        return
    if params is not None:
        have = _params(orig)
        if have is None or have[:len(params)] != params:
            _missing.append((target, measures, "signature (%s) is not (%s, ...)"
                             % (", ".join(have or ["?"]), ", ".join(params))))
            return
    setattr(cls, name, make(orig))


def _on_subclass(base, hook):
    """base.__init_subclass__ calls hook(cls) for every subclass defined from now on (torchdata's
    StatefulDataLoader and its iterators, a job's own DataLoader), after what it did before."""
    prev = base.__dict__.get("__init_subclass__")

    def __init_subclass__(cls, **kwargs):
        if prev is not None:
            prev.__get__(None, cls)(**kwargs)
        else:
            super(base, cls).__init_subclass__(**kwargs)
        if S.active:
            guarded("subclass", hook, cls)
    base.__init_subclass__ = classmethod(__init_subclass__)


def _loader_subclass(cls):
    """A DataLoader subclass with its own __init__ or __iter__ (which need not call the
    DataLoader's): wrapped like the DataLoader's, the outermost wrapper of an object records."""
    d = cls.__dict__
    if "__init__" in d:
        cls.__init__ = _make_init(d["__init__"], cls, subclass=True)
    if "__iter__" in d:
        cls.__iter__ = _make_iter(d["__iter__"])


def _iterator_subclass(cls):
    """An iterator class of its own (torchdata's _Stateful*DataLoaderIter): its __next__ gives
    the batches, its __init__ ties it, its fetcher and its workers to the loader."""
    d = cls.__dict__
    init = d.get("__init__")
    if init is not None:
        if (_params(init) or [])[:2] == ["self", "loader"]:
            cls.__init__ = _make_iter_init(init, None)
        else:
            _partial_once(cls.__name__ + ".__init__", "which loader its workers serve",
                          "signature is not (self, loader, ...)")
    if "__next__" in d:
        cls.__next__ = _make_next(d["__next__"])


def patch(mod):
    """Patch the freshly executed torch.utils.data.dataloader module."""
    global _patched, _fault, _max_batches, _stop_file
    if _patched:
        return
    _patched = True
    cfg = _config.load()
    if cfg.dir is None:
        return
    R.init(cfg)
    _fault = cfg.fault
    _max_batches = cfg.max_batches
    _stop_file = cfg.stop_file
    R._fork_handlers.append(_after_fork)
    if _fault is not None:
        _fault_hit("patch")
    _unpatched.update(cfg.test_unpatched)

    DL = getattr(mod, "DataLoader", None)
    if not isinstance(DL, type) or "__init__" not in DL.__dict__:
        raise RuntimeError("torch %s has no DataLoader class in %s: nothing can be measured"
                           % (_torch_version(), mod.__name__))
    DL.__init__ = _make_init(DL.__dict__["__init__"], DL)
    _wrap_method(DL, "DataLoader", "__iter__", _make_iter, "the start of each epoch")
    base = getattr(mod, "_BaseDataLoaderIter", None)
    _wrap_method(base, "_BaseDataLoaderIter", "__next__",
                 _make_next, "each batch's wait, hence the stall and the step time")
    _on_subclass(DL, _loader_subclass)
    if base is not None:
        _on_subclass(base, _iterator_subclass)
    for name, multi in (("_SingleProcessDataLoaderIter", False),
                        ("_MultiProcessingDataLoaderIter", True)):
        _wrap_method(getattr(mod, name, None), name, "__init__",
                     lambda orig, multi=multi: _make_iter_init(orig, multi),
                     "which loader its workers serve (their fetch and __getitem__ times)"
                     if multi else "main-process fetch and __getitem__ times",
                     ["self", "loader"])
    kind = getattr(mod, "_DatasetKind", None)
    fetcher = _own(kind, "_DatasetKind", "create_fetcher")
    if isinstance(fetcher, staticmethod):
        kind.create_fetcher = _make_create_fetcher(fetcher.__func__)
    else:
        _missing.append(("_DatasetKind.create_fetcher",
                         "the fetch, collate and __getitem__ times of every worker",
                         "not in this torch" if fetcher is None else "not a staticmethod"))
    utils = getattr(mod, "_utils", None)
    pm = getattr(utils, "pin_memory", None)
    pin = _own(pm, "_utils.pin_memory", "pin_memory")
    if callable(pin):
        pm.pin_memory = _make_pin(pin)
    else:
        _missing.append(("_utils.pin_memory.pin_memory", "pin_memory times", "not in this torch"))
    loop = _own(pm, "_utils.pin_memory", "_pin_memory_loop")
    if callable(loop) and "done_event" in (_params(loop) or []):
        pm._pin_memory_loop = _make_pin_loop(loop)
    else:
        _missing.append(("_utils.pin_memory._pin_memory_loop",
                         "which loader the pin thread's batches belong to (pin_memory times)",
                         "not in this torch" if not callable(loop) else "no done_event parameter"))

    import multiprocessing.util  # noqa: F401  (its atexit handler must be registered before ours)
    atexit.register(_at_exit)
