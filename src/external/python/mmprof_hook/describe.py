"""What the loader and versions records say: read-only inspection helpers.

Nothing here imports a module the job has not imported itself: versions of
packages that are not loaded come from their installed distribution metadata.
"""

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
MAX_REPR = 4000


def short_repr(obj, limit=MAX_REPR):
    try:
        r = repr(obj)
    except Exception as exc:  # a user __repr__ that fails must not fail us
        r = "<repr failed: %s>" % type(exc).__name__
    if len(r) > limit:
        r = r[:limit] + "...<%d more chars>" % (len(r) - limit)
    return r


def callable_name(fn):
    if fn is None:
        return None
    inner = getattr(fn, "mmprof_wrapped_fn", None)  # our worker_init_fn wrapper
    if inner is not None or type(fn).__name__ == "WorkerInit":
        return callable_name(inner)
    import functools
    if isinstance(fn, functools.partial):
        return "functools.partial(%s)" % callable_name(fn.func)
    qn = getattr(fn, "__qualname__", None)
    mod = getattr(fn, "__module__", None)
    if not isinstance(qn, str):
        cls = type(fn)
        qn, mod = cls.__qualname__, cls.__module__
    return "%s.%s" % (mod, qn) if mod else qn


def _unwrap_chain(ds, attr, depth=4):
    """dataset.<attr>, looking through wrappers such as Subset (.dataset)."""
    seen = 0
    while ds is not None and seen < depth:
        try:
            value = getattr(ds, attr, None)
        except Exception:
            value = None
        if value is not None:
            return value
        try:
            ds = getattr(ds, "dataset", None)
        except Exception:
            ds = None
        seen += 1
    return None


def dataset_class(ds):
    inner = getattr(ds, "_datapipe", None)  # torch's DataPipe serialisation wrapper
    return type(inner if inner is not None else ds).__name__


def _len(obj):
    try:
        return int(len(obj))
    except Exception:
        return None


def context_name(ctx):
    """Name of a multiprocessing_context without fixing the default one."""
    if ctx is None:
        return "default"
    if isinstance(ctx, str):
        return ctx
    try:
        import multiprocessing.context as mpc
        if isinstance(ctx, mpc.DefaultContext):
            return "default"
    except Exception:
        pass
    name = getattr(ctx, "_name", None)
    return name if isinstance(name, str) else type(ctx).__name__


def effective_start_method(loader):
    """The start method workers of this loader use, read without side effects
    (multiprocessing.get_start_method() without allow_none would fix it)."""
    ctx = getattr(loader, "multiprocessing_context", None)
    if ctx is not None:
        return context_name(ctx)
    try:
        import multiprocessing
        m = multiprocessing.get_start_method(allow_none=True)
        if m is not None:
            return m
        import multiprocessing.context as mpc
        default = getattr(mpc._default_context, "_default_context", None)
        return getattr(default, "_name", None)
    except Exception:
        return None


# The dataset libraries whose own settings decide what a DataLoader around them delivers:
# (distribution name, top-level module, module prefix of its dataset classes, dataset class,
# settings read from the dataset, the attribute of its on-disk location). Their documented
# constructor arguments (Hugging Face datasets: the rows and features it holds), read back.
_LIBRARIES = (
    ("mosaicml-streaming", "streaming", "streaming.", "StreamingDataset",
     ("batch_size", "shuffle", "shuffle_algo", "shuffle_block_size", "predownload", "cache_limit",
      "num_canonical_nodes", "sampling_method", "partition_algo", "batching_method",
      "epoch_size"), "streams"),
    ("litdata", "litdata", "litdata.", "StreamingDataset",
     ("shuffle", "drop_last", "seed", "max_cache_size", "max_pre_download"), "input_dir"),
    ("webdataset", "webdataset", "webdataset.", None, (), "pipeline"),
    ("datasets", "datasets", "datasets.arrow_dataset", "Dataset", ("num_rows", "features"),
     "cache_files"),
)


def _library_of(ds):
    """The _LIBRARIES row of the dataset's library and the library's class the dataset is (a
    job's subclass of StreamingDataset is a StreamingDataset), or (None, None)."""
    for cls in getattr(type(ds), "__mro__", ()):
        mod = getattr(cls, "__module__", "") or ""
        for lib in _LIBRARIES:
            if mod.startswith(lib[2]) and lib[3] in (None, cls.__name__):
                return lib, cls.__name__
    return None, None


def _shard_urls(pipeline):
    """A WebDataset pipeline's shards, from its first stage's list (SimpleShardList,
    ResampledShards): each local file as an absolute path (the job's working directory resolves a
    relative one), any other URL (http://, pipe:, s3://) as remote."""
    urls = getattr(pipeline[0], "urls", None) if pipeline else None
    out = []
    for url in urls if isinstance(urls, (list, tuple)) else []:
        url = str(url)
        local = url[len("file:"):] if url.startswith("file:") else url
        if ":" in local.split("/", 1)[0]:
            out.append({"local": None, "remote": url})
        else:
            out.append({"local": os.path.abspath(local), "remote": None})
    return out


def _locations(ds, attr):
    """The dataset's on-disk (local) and remote locations: MDS streams, a LitData Dir, the Arrow
    files of a Hugging Face dataset ({"filename": ...}), a WebDataset's shards."""
    out = []
    try:
        value = getattr(ds, attr, None)
        if attr == "pipeline":
            return _shard_urls(value)
        for item in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(item, dict):
                local, remote = item.get("filename"), None
            else:
                local = getattr(item, "local", None) or getattr(item, "path", None)
                remote = getattr(item, "remote", None) or getattr(item, "url", None)
            if local is not None or remote is not None:
                out.append({"local": json_value(local), "remote": json_value(remote)})
    except Exception:
        pass
    return out


def library_config(ds):
    """The dataset library's name, version and own settings, or None for a plain dataset."""
    seen = 0
    while ds is not None and seen < 4:  # through wrappers (Subset, the DataPipe wrapper)
        lib, cls = _library_of(ds)
        if lib is not None:
            name, module, _, _, settings, where = lib
            out = {"name": name, "version": _module_version(module, name),
                   "class": cls, "settings": {}}
            for key in settings:
                try:
                    out["settings"][key] = json_value(getattr(ds, key, None))
                except Exception:
                    out["settings"][key] = None
            if where is not None:
                out["locations"] = _locations(ds, where)
            return out
        ds = getattr(ds, "_datapipe", None) or getattr(ds, "dataset", None)
        seen += 1
    return None


def loader_config(loader):
    """The loader's settings; one a DataLoader of another torch lacks is null (not a default)."""
    def get(name):
        return getattr(loader, name, None)

    def flag(name):
        v = get(name)
        return None if v is None else bool(v)

    def kind(name):
        v = get(name)
        return type(v).__name__ if v is not None else None

    ds = get("dataset")
    transform = _unwrap_chain(ds, "transform")
    root = _unwrap_chain(ds, "root")
    cfg = {
        "num_workers": get("num_workers"),
        "batch_size": get("batch_size"),
        "prefetch_factor": get("prefetch_factor"),
        "pin_memory": flag("pin_memory"),
    }
    if hasattr(loader, "pin_memory_device"):
        cfg["pin_memory_device"] = loader.pin_memory_device
    cfg.update({
        "persistent_workers": flag("persistent_workers"),
        "in_order": get("in_order"),
        "drop_last": flag("drop_last"),
        "timeout": get("timeout"),
        "multiprocessing_context": context_name(get("multiprocessing_context")),
        "sampler": kind("sampler"),
        "batch_sampler": kind("batch_sampler"),
        "dataset": dataset_class(ds),
        "dataset_len": _len(ds),
        "collate_fn": callable_name(get("collate_fn")),
        "worker_init_fn": callable_name(get("worker_init_fn")),
        "transform": short_repr(transform) if transform is not None else None,
        "dataset_root": os.path.abspath(os.fspath(root)) if isinstance(root, (str, os.PathLike))
                        else (short_repr(root) if root is not None else None),
        "library": library_config(ds),
    })
    return cfg


def dali_config(it):
    """A DALI framework iterator (DALIGenericIterator) in the loader record's shape: the
    DataLoader keys it has not are null, its pipeline's own settings are the library's."""
    pipes = getattr(it, "_pipes", None) or []
    pipe = pipes[0] if pipes else None

    def of(obj, name):
        try:
            return json_value(getattr(obj, name, None))
        except Exception:
            return None

    settings = {"num_threads": of(pipe, "num_threads"),
                "prefetch_queue_depth": of(pipe, "prefetch_queue_depth"),
                "device_id": of(pipe, "device_id"),
                "pipelines": len(pipes),
                "reader_name": of(it, "_reader_name"),
                "last_batch_policy": getattr(getattr(it, "_last_batch_policy", None), "name", None),
                "auto_reset": of(it, "_auto_reset")}
    cfg = {k: None for k in ("num_workers", "prefetch_factor", "pin_memory", "persistent_workers",
                             "in_order", "drop_last", "timeout", "multiprocessing_context",
                             "sampler", "batch_sampler", "collate_fn", "worker_init_fn",
                             "transform", "dataset_root")}
    cls = type(it).__name__
    cfg.update({"batch_size": of(it, "batch_size"), "dataset": cls, "dataset_len": _len(it),
                "library": {"name": "nvidia-dali",
                            "version": _module_version("nvidia.dali", "nvidia-dali-cuda130",
                                                       "nvidia-dali-cuda120", "nvidia-dali"),
                            "class": cls, "settings": settings}})
    return cfg


# A torchdata.nodes node's own settings, where it has them.
_NODE_SETTINGS = ("num_workers", "method", "in_order", "multiprocessing_context", "max_concurrent",
                  "batch_size", "drop_last", "prefetch_factor", "pin_memory_device",
                  "snapshot_frequency")


def nodes_of(loader):
    """A torchdata.nodes Loader's graph, walked from its root through each node's ``source``."""
    nodes = []
    node = getattr(loader, "root", None)
    seen = set()
    while node is not None and id(node) not in seen and len(nodes) < 32:
        seen.add(id(node))
        nodes.append(node)
        node = getattr(node, "source", None)
    return nodes


def loading_mapper(nodes):
    """The ParallelMapper that loads: the one with the most workers (a collate mapper has one)."""
    mappers = [n for n in nodes if type(n).__name__ == "ParallelMapper"]
    return max(mappers, key=lambda n: getattr(n, "num_workers", 0) or 0) if mappers else None


def nodes_config(loader):
    """A torchdata.nodes Loader in the loader record's shape: its graph (nodes_of); the
    DataLoader keys read from the nodes that hold them (a process ParallelMapper's workers, which
    threads are not; the first Batcher's batch size; a Prefetcher's depth; a PinMemory), the
    dataset from the bound ``__getitem__`` a mapper calls (MapStyleWrapper), each node's class
    and settings in the library's settings."""
    nodes = nodes_of(loader)

    def first(cls_name):
        return next((n for n in nodes if type(n).__name__ == cls_name), None)

    settings = []
    for n in nodes:
        s = {"class": type(n).__name__}
        for key in _NODE_SETTINGS:
            if key in getattr(n, "__dict__", {}):
                v = n.__dict__[key]
                s[key] = context_name(v) if key == "multiprocessing_context" else json_value(v)
        settings.append(s)
    mapper = loading_mapper(nodes)
    batcher = first("Batcher")
    prefetch, sampler = first("Prefetcher"), first("SamplerWrapper")
    ds = next((getattr(getattr(n, "map_fn", None), "__self__", None) for n in nodes
               if getattr(getattr(n, "map_fn", None), "__self__", None) is not None), None)
    processes = mapper is not None and getattr(mapper, "method", None) == "process"
    root = _unwrap_chain(ds, "root") if ds is not None else None
    cfg = {k: None for k in ("persistent_workers", "timeout", "batch_sampler", "collate_fn",
                             "worker_init_fn", "transform")}
    cfg.update({
        "num_workers": getattr(mapper, "num_workers", None) if processes else None,
        "batch_size": getattr(batcher, "batch_size", None),
        "prefetch_factor": getattr(prefetch, "prefetch_factor", None),
        "pin_memory": first("PinMemory") is not None,
        "in_order": getattr(mapper, "in_order", None),
        "drop_last": getattr(batcher, "drop_last", None),
        "multiprocessing_context": context_name(getattr(mapper, "multiprocessing_context", None))
                                   if processes else None,
        "sampler": type(sampler.sampler).__name__ if getattr(sampler, "sampler", None) is not None
                   else None,
        "dataset": dataset_class(ds) if ds is not None else type(nodes[-1]).__name__ if nodes
                   else None,
        "dataset_len": _len(ds) if ds is not None else None,
        "dataset_root": os.path.abspath(os.fspath(root)) if isinstance(root, (str, os.PathLike))
                        else None,
        "library": {"name": "torchdata", "version": _module_version("torchdata", "torchdata"),
                    "class": "torchdata.nodes.Loader", "settings": {"nodes": settings}},
    })
    return cfg


def json_value(v):
    """A value as the loader record can hold it (JSON scalars as they are)."""
    if type(v).__module__ == "numpy" and getattr(v, "shape", None) == ():
        v = v.item()  # a NumPy scalar (np.int64(96)) is the number it holds
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, (list, tuple)) and all(x is None or isinstance(x, (bool, int, float, str)) for x in v):
        return list(v)
    return short_repr(v, 200)


def call_stack(loader_type, frame, limit=8):
    """file:line of the frames that constructed the loader, innermost first,
    skipping the hook, torch's DataLoader module and the __init__ methods of
    the loader's own class chain (a subclass calling super().__init__)."""
    init_codes = set()
    for cls in getattr(loader_type, "__mro__", ()):
        fn = cls.__dict__.get("__init__")
        code = getattr(fn, "__code__", None)
        if code is not None:
            init_codes.add(code)
    out = []
    f = frame
    while f is not None and len(out) < limit:
        co = f.f_code
        fname = co.co_filename
        if not out and (co in init_codes or fname.startswith(_HERE)
                        or fname.replace(os.sep, "/").endswith("torch/utils/data/dataloader.py")):
            f = f.f_back
            continue
        out.append("%s:%d" % (fname, f.f_lineno))
        f = f.f_back
    return out


def _dist_version(*names):
    try:
        import importlib.metadata as md
    except Exception:
        return None
    for name in names:
        try:
            return md.version(name)
        except Exception:
            continue
    return None


def _module_version(modname, *dists):
    mod = sys.modules.get(modname)
    v = getattr(mod, "__version__", None) if mod is not None else None
    if isinstance(v, str):
        return v
    return _dist_version(*dists)


def _nvml_device_count():
    """GPUs the NVIDIA driver sees, via NVML: unlike torch.cuda.is_available()
    this creates no CUDA context and so keeps later fork()s safe."""
    import ctypes
    try:
        lib = ctypes.CDLL("libnvidia-ml.so.1")
    except OSError:
        return None
    try:
        if lib.nvmlInit_v2() != 0:
            return None
        try:
            n = ctypes.c_uint(0)
            if lib.nvmlDeviceGetCount_v2(ctypes.byref(n)) != 0:
                return None
            return int(n.value)
        finally:
            lib.nvmlShutdown()
    except Exception:
        return None


def cuda_availability(torch):
    """(cuda_available, how it was decided)."""
    if getattr(getattr(torch, "version", None), "cuda", None) is None:
        return False, "not_compiled"
    cuda = getattr(torch, "cuda", None)
    try:
        if cuda is not None and cuda.is_initialized():
            return bool(cuda.is_available()), "runtime"
    except Exception:
        pass
    n = _nvml_device_count()
    if n is None:
        return False, "no_nvml"
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        v = visible.strip()
        if v == "" or v.startswith("-1"):
            n = 0
    return n > 0, "nvml"


def versions_record(now_ns):
    torch = sys.modules.get("torch")
    pil = _module_version("PIL", "Pillow", "pillow", "Pillow-SIMD", "pillow-simd")
    simd = _dist_version("Pillow-SIMD", "pillow-simd") is not None or (pil is not None and ".post" in pil)
    avail, how = cuda_availability(torch) if torch is not None else (False, "no_torch")
    return {
        "t": "versions",
        "python": sys.version.split()[0],
        "torch": str(torch.__version__) if getattr(torch, "__version__", None) is not None else None,
        "torchvision": _module_version("torchvision", "torchvision"),
        "pil": pil,
        "pillow_simd": bool(simd),
        "numpy": _module_version("numpy", "numpy"),
        "cuda": getattr(getattr(torch, "version", None), "cuda", None),
        "cuda_available": bool(avail),
        "cuda_check": how,
        "ns": now_ns(),
    }
