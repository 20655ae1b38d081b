# -- launch configurations (written by xlate) ------------------------------------------------------------------
# _XL_CONFIGS[launcher] lists the launch configurations xlate's verification gate accepted for that launcher.
# The first is the default, CUDA's launch: one Triton program per CUDA block. "blocks" > 1 runs that many
# consecutive CUDA blocks in one program; "stages" software-pipelines the kernel's unrolled loops. On a GPU a launcher with several configurations times them at its first
# launch for each grid size and largest buffer size (each rounded up to a power of two) and keeps the fastest; the choice is cached per GPU
# model and Triton version in $XLATE_TRITON_TUNE_CACHE (default: ~/.cache/xlate/triton-launch.json), so later
# processes reuse it. Under TRITON_INTERPRET=1, with XLATE_TRITON_TUNE=0, or with one configuration, the first is
# used and nothing is timed.
_XL_CHOSEN = {}  # launcher -> the configuration of its last launch
_XL_TIMINGS = {}  # launcher -> [[configuration, milliseconds per launch], ...] of its last timing here
_XL_MEMO = {}  # cache key -> configuration, for this process
_XL_SIGNATURE = []  # this module's content hash (computed once): a changed port is timed again
_XL_MARGIN = 0.03  # another configuration replaces the first only when it is at least this much faster
_XL_ROUNDS = 7  # interleaved timing rounds (each configuration's median of these is compared)


def _xl_launch(name, launch, grid, args):
    configs = _XL_CONFIGS[name]
    config = configs[0]
    if len(configs) > 1 and not _INTERPRET and os.environ.get("XLATE_TRITON_TUNE", "1") != "0":
        config = _xl_choose(name, configs, launch, grid, args)
    _XL_CHOSEN[name] = config
    launch(config)


def _xl_choose(name, configs, launch, grid, args):
    import torch

    tensors = [a for a in args if isinstance(a, torch.Tensor)]
    if not tensors or not tensors[0].is_cuda:
        return configs[0]  # nothing to time on
    blocks = 1
    for g in grid:
        blocks *= int(g)
    key = _xl_key(name, torch.cuda.get_device_name(tensors[0].device), blocks, tensors)
    if torch.cuda.is_current_stream_capturing():
        # inside a CUDA graph capture nothing may synchronise, so nothing is timed: the choice made for this
        # launch before the capture (in this process or the cache file) is replayed, else the default
        chosen = _XL_MEMO.get(key, _xl_cache_read().get(key))
        return chosen if chosen in configs else configs[0]
    timings = []
    chosen = _xl_pick(key, configs, lambda: _xl_time(configs, launch, tensors, timings))
    if timings:
        _XL_TIMINGS[name] = timings
    return chosen


def _xl_key(name, device, blocks, tensors):
    """What a choice is cached under: the port, GPU, Triton version, and the launch's size in powers of two, both
    its grid and its largest buffer (a row kernel's grid is its row count: short and long rows want different
    configurations)."""
    largest = max((t.numel() for t in tensors), default=1)
    return "|".join((_xl_signature(), name, device, "triton " + triton.__version__,
                     str(1 << (max(blocks, 1) - 1).bit_length()), "n" + str(1 << (max(largest, 1) - 1).bit_length())))


def _xl_pick(key, configs, time_them):
    """The configuration cached for `key` (in this process, else in the cache file) while it is one of
    `configs`; otherwise the one `time_them()` finds fastest, cached for later launches and processes."""
    if key not in _XL_MEMO:
        chosen = _xl_cache_read().get(key)
        if chosen not in configs:  # not timed yet, or timed for another set of configurations
            chosen = time_them()
            cache = _xl_cache_read()
            cache[key] = chosen
            _xl_cache_write(cache)
        _XL_MEMO[key] = chosen
    return _XL_MEMO[key]


def _xl_time(configs, launch, tensors, timings):
    """The fastest configuration on these arguments; each one's median time per launch appended to `timings`.
    Every configuration is launched once first (compiled, warmed up), then timed in _XL_ROUNDS interleaved
    rounds -- one batch of launches (about 1 ms) of each configuration in turn -- so a GPU still ramping its
    clocks, or drifting, weighs on all of them alike (timed one after the other, the first configuration took the
    slow start: layernorm's kernel2 chose its packed launch, 1.059x CUDA, over the default's 1.012x, on an H100).
    Every tensor is restored afterwards, so the caller's launch sees the arguments as they were."""
    import torch

    try:
        saved = [t.clone() for t in tensors]
    except RuntimeError:  # no memory for a copy: no timing
        return configs[0]
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    runs = []  # [index, configuration, launches a batch, samples]

    def batch_ms(config, batch):
        start.record()
        for _ in range(batch):
            launch(config)
        stop.record()
        stop.synchronize()
        return start.elapsed_time(stop) / batch

    best, best_ms = configs[0], float("inf")
    try:
        for index, config in enumerate(configs):
            try:
                launch(config)  # compiles and warms up
                once = batch_ms(config, 1)
            except Exception:
                if index == 0:
                    raise
                continue  # e.g. out of resources on this GPU: never chosen
            runs.append([index, config, max(1, min(100, int(1.0 / max(once, 1e-3)))), []])
        for _ in range(_XL_ROUNDS):
            for run in runs:
                if run[3] is None:
                    continue
                try:
                    run[3].append(batch_ms(run[1], run[2]))
                except Exception:
                    if run[0] == 0:
                        raise
                    run[3] = None  # failed after its warm-up: never chosen
        for index, config, _batch, samples in runs:
            if not samples:
                continue
            ms = sorted(samples)[len(samples) // 2]
            timings.append([config, ms])
            if index == 0 or ms < best_ms * (1 - _XL_MARGIN):
                best, best_ms = config, ms
    finally:
        for t, s in zip(tensors, saved):
            t.copy_(s)
    return best


def _xl_signature():
    if not _XL_SIGNATURE:
        import hashlib

        try:
            with open(__file__, "rb") as fh:
                text = fh.read()
        except (NameError, OSError):
            text = repr(_XL_CONFIGS).encode()
        _XL_SIGNATURE.append(hashlib.sha256(text).hexdigest()[:16])
    return _XL_SIGNATURE[0]


def _xl_cache_path():
    path = os.environ.get("XLATE_TRITON_TUNE_CACHE")
    if path:
        return path
    root = os.environ.get("XLATE_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "xlate")
    return os.path.join(root, "triton-launch.json")


def _xl_cache_read():
    import json

    try:
        with open(_xl_cache_path(), encoding="utf-8") as fh:
            cache = json.load(fh)
        return cache if isinstance(cache, dict) else {}
    except (OSError, ValueError):
        return {}


def _xl_cache_write(cache):
    import json
    import tempfile

    path = _xl_cache_path()
    folder = os.path.dirname(path) or "."
    tmp = None
    try:
        os.makedirs(folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".triton-launch-")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(cache, fh, indent=1, sort_keys=True)
        os.replace(tmp, path)  # atomic: a concurrent reader sees the old file or the new one
    except OSError:  # a read-only cache: the choice holds for this process only
        if tmp is not None and os.path.exists(tmp):
            os.remove(tmp)
