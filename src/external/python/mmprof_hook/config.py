"""The hook's settings, read once per process from the environment.

Only ``os`` is needed to decide whether the hook is active, so a process that
never imports torch pays for nothing else (see ``mmprof_hook.install``).
Everything here is the contract with mmprof's C++ side; docs/external-hook.md
describes each variable.
"""

import os

ENV_DIR = "MMPROF_HOOK_DIR"
ENV_OVERRIDES = "MMPROF_HOOK_OVERRIDES"
ENV_MAX_BATCHES = "MMPROF_HOOK_MAX_BATCHES"
ENV_LOADER = "MMPROF_HOOK_LOADER"
ENV_DIGEST_BATCHES = "MMPROF_HOOK_DIGEST_BATCHES"
ENV_GETITEM_EVERY = "MMPROF_HOOK_GETITEM_EVERY"
# A path: once it exists, the next __next__ of a followed loader stops the job as
# MMPROF_HOOK_MAX_BATCHES does (mmprof's --duration creates it).
ENV_STOP_FILE = "MMPROF_HOOK_STOP_FILE"
# Seconds a worker's fetch may take before the hook reports it stuck (a "stuck" record: its
# worker, indices and the item __getitem__ is on); 0: never.
ENV_STUCK_S = "MMPROF_HOOK_STUCK_S"
# Test-only: "<where>[:<n>]" makes the n-th pass through the named hook point
# raise an internal error (see docs/external-hook.md, "Fault injection").
ENV_TEST_FAULT = "MMPROF_HOOK_TEST_FAULT"
# Test-only: comma-separated torch names ("_DatasetKind.create_fetcher", ...) the hook leaves
# unpatched as if this torch lacked them, to test what a partial hook reports.
ENV_TEST_UNPATCHED = "MMPROF_HOOK_TEST_UNPATCHED"

DEFAULT_DIGEST_BATCHES = 8
DEFAULT_GETITEM_EVERY = 1
DEFAULT_STUCK_S = 60


def hook_dir(environ=None):
    """The record directory, or None when the hook is off."""
    value = (os.environ if environ is None else environ).get(ENV_DIR, "")
    return value or None


class Config:
    """Parsed settings. ``problems`` lists (variable, message) pairs for
    values that could not be used; they are reported as ``error`` records by
    the main process and otherwise ignored (the hook stays on)."""

    __slots__ = ("dir", "overrides", "max_batches", "loader", "digest_batches",
                 "getitem_every", "stop_file", "stuck_ns", "fault", "test_unpatched", "problems")

    def __init__(self):
        self.dir = None
        self.overrides = None          # dict in the order given, or None
        self.max_batches = None        # int >= 0 or None
        self.loader = None             # None, int (construction order) or str (dataset class)
        self.digest_batches = DEFAULT_DIGEST_BATCHES
        self.getitem_every = DEFAULT_GETITEM_EVERY
        self.stop_file = None          # path or None
        self.stuck_ns = DEFAULT_STUCK_S * 10**9  # a fetch this long is reported stuck (0: never)
        self.fault = None              # [where, countdown] or None
        self.test_unpatched = ()       # names to leave unpatched (tests only)
        self.problems = []


def _int(environ, name, default, minimum, problems):
    raw = environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw.strip(), 10)
    except ValueError:
        problems.append((name, "not an integer: %r" % raw))
        return default
    if value < minimum:
        problems.append((name, "must be >= %d: %r" % (minimum, raw)))
        return default
    return value


def load(environ=None):
    env = os.environ if environ is None else environ
    cfg = Config()
    cfg.dir = hook_dir(env)
    problems = cfg.problems

    raw = env.get(ENV_OVERRIDES)
    if raw is not None and raw.strip() != "":
        import json
        try:
            value = json.loads(raw)
        except ValueError as exc:
            problems.append((ENV_OVERRIDES, "not valid JSON: %s" % exc))
        else:
            if isinstance(value, dict):
                cfg.overrides = value
            else:
                problems.append((ENV_OVERRIDES, "must be a JSON object, got %s" % type(value).__name__))

    cfg.max_batches = _int(env, ENV_MAX_BATCHES, None, 0, problems)

    raw = env.get(ENV_LOADER)
    if raw is not None and raw.strip() != "":
        raw = raw.strip()
        try:
            cfg.loader = int(raw, 10)
        except ValueError:
            cfg.loader = raw

    cfg.digest_batches = _int(env, ENV_DIGEST_BATCHES, DEFAULT_DIGEST_BATCHES, 0, problems)
    cfg.getitem_every = _int(env, ENV_GETITEM_EVERY, DEFAULT_GETITEM_EVERY, 0, problems)
    cfg.stop_file = env.get(ENV_STOP_FILE) or None
    stuck_s = _int(env, ENV_STUCK_S, DEFAULT_STUCK_S, 0, problems)
    cfg.stuck_ns = stuck_s * 10**9 if stuck_s > 0 else float("inf")

    raw = env.get(ENV_TEST_FAULT)
    if raw:
        where, _, count = raw.partition(":")
        try:
            n = int(count) if count else 1
        except ValueError:
            n = 1
        cfg.fault = [where.strip(), max(1, n)]
    cfg.test_unpatched = tuple(n.strip() for n in env.get(ENV_TEST_UNPATCHED, "").split(",")
                               if n.strip())
    return cfg
