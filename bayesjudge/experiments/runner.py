"""Run a study's independent tasks in-process, in local processes or on a Dask cluster.

Every runner of :mod:`bayesjudge.experiments` (calibration splits, misclassification
splits, Monte Carlo grids, jury simulations) describes its work as a list of
independent *tasks* and hands them to :func:`run_tasks` with one ``executor``
argument:

* ``None`` -- in this process, one task after the other (the default);
* ``"joblib"`` or a configured ``joblib.Parallel`` -- local worker processes;
* a ``dask.distributed.Client`` (or ``"dask"``: the Client this process last
  connected) -- the workers of a ``LocalCluster`` or of a remote cluster whose
  scheduler the Client is connected to.

Reproducibility does not depend on the executor: every random draw that defines a
task is made by the caller before anything runs, and each task carries its own
seed (:func:`task_seeds`); no random state is shared between tasks. Results come
back in task order.

Compile once per worker: compiled models are cached per process
(:func:`bayesjudge.engine.compiled.get_engine`), and joblib and Dask workers are
long-lived processes, so a worker compiles each model structure on its first task
and reuses it for every later one. Tasks sent to one worker process never run
concurrently (a per-process lock): an engine swaps its data in place, so two
threads of one process must not fit at once. Give Dask workers one thread each
(``LocalCluster(threads_per_worker=1)``, ``dask worker --nthreads 1``) and scale with
processes.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import numpy as np
from tqdm import tqdm

__all__ = ["Executor", "Seed", "check_positive_int", "executor_name", "run_tasks", "task_seeds"]

Executor = Literal["joblib", "dask"] | Any | None

# One task at a time per process: compiled engines are per-process and not thread-safe.
#: A study's seed: an int, a numpy Generator or None (fresh entropy).
Seed = int | np.random.Generator | None

_TASK_LOCK = threading.Lock()


def task_seeds(random_seed: int | np.random.Generator | None, n_tasks: int) -> list[int]:
    """Independent 63-bit seeds, one per task, from one user seed.

    Children of ``numpy.random.SeedSequence(random_seed)`` (a Generator is drawn from
    once), so task ``i`` gets the same seed whatever the executor, the number of
    workers or the order tasks finish in.
    """
    if isinstance(random_seed, np.random.Generator):
        random_seed = int(random_seed.integers(2**63))
    children = np.random.SeedSequence(random_seed).spawn(int(n_tasks))
    return [int(c.generate_state(1, np.uint64)[0] >> np.uint64(1)) for c in children]


def executor_name(executor: Executor) -> str:
    """``"in-process"``, ``"joblib"`` or ``"dask"``; ValueError naming the accepted values."""
    if executor is None:
        return "in-process"
    if isinstance(executor, str):
        if executor in ("joblib", "dask"):
            return executor
    elif _is_dask_client(executor):
        return "dask"
    elif type(executor).__module__.startswith("joblib") and hasattr(executor, "n_jobs"):
        return "joblib"
    raise ValueError(
        f"executor must be None (in-process), 'joblib', a joblib.Parallel, 'dask' or a "
        f"dask.distributed.Client; got {executor!r}."
    )


def run_tasks(
    fn: Callable[..., Any],
    tasks: Sequence[Any],
    *,
    shared: Mapping[str, Any] | None = None,
    executor: Executor = None,
    progressbar: bool = True,
    desc: str = "tasks",
) -> list[Any]:
    """``[fn(task, **shared) for task in tasks]``, on the chosen executor, in task order.

    Parameters
    ----------
    fn : callable
        A module-level function (it is pickled to the workers) of one task and the
        ``shared`` keyword arguments. It must draw its random numbers from a seed
        carried by its task.
    tasks : sequence
        Picklable task descriptions (e.g. ``(index, seed, settings)`` tuples).
    shared : mapping, optional
        Arguments every task needs (data, settings). Sent to each worker once: joblib
        receives them with each chunk of tasks, Dask broadcasts them before the tasks.
    executor : None, "joblib", joblib.Parallel, "dask" or dask.distributed.Client
        Where the tasks run (module docstring).
    progressbar : bool, default True
        A tqdm bar of tasks done / total, in every mode.
    desc : str
        Label of the bar.

    Returns
    -------
    list
        ``fn``'s results, in the order of ``tasks``.

    Raises
    ------
    Exception
        The first exception raised by a task, re-raised here (remaining Dask tasks
        are cancelled).
    """
    kind = executor_name(executor)
    shared = dict(shared or {})
    tasks = list(tasks)
    bar = tqdm(total=len(tasks), desc=desc, disable=not progressbar, leave=False)
    try:
        if kind == "in-process":
            out = []
            for task in tasks:
                out.append(fn(task, **shared))
                bar.update(1)
        elif kind == "joblib":
            out = _run_joblib(fn, tasks, shared, executor, bar)
        else:
            out = _run_dask(fn, tasks, shared, executor, bar)
        bar.refresh()  # show "n/n" before the bar is cleared
        return out
    finally:
        bar.close()


def _call_locked(fn: Callable[..., Any], task: Any, shared: Mapping[str, Any]) -> Any:
    with _TASK_LOCK:
        return fn(task, **shared)


def _call_chunk(fn, chunk, shared) -> list[tuple[int, Any]]:
    return [(i, _call_locked(fn, task, shared)) for i, task in chunk]


def _run_joblib(fn, tasks, shared, executor, bar) -> list[Any]:
    import joblib

    parallel = (
        joblib.Parallel(n_jobs=-1, return_as="generator_unordered")
        if isinstance(executor, str) else executor
    )
    # A few chunks per worker: shared data travel once per chunk, the bar still moves
    # and the load stays balanced; the worker processes persist, so each compiles a
    # model structure once whichever chunks it gets.
    n_workers = joblib.effective_n_jobs(getattr(parallel, "n_jobs", 1))
    n_chunks = min(len(tasks), 4 * n_workers)
    indexed = list(enumerate(tasks))
    chunks = [[indexed[i] for i in c] for c in np.array_split(np.arange(len(tasks)), n_chunks)
              if len(c)]
    results: dict[int, Any] = {}
    for chunk_out in parallel(joblib.delayed(_call_chunk)(fn, c, shared) for c in chunks):
        results.update(chunk_out)
        bar.update(len(chunk_out))
    return [results[i] for i in range(len(tasks))]


def _run_dask(fn, tasks, shared, executor, bar) -> list[Any]:
    from distributed import as_completed, get_client

    client = get_client() if isinstance(executor, str) else executor
    shared_future = client.scatter([shared], broadcast=True, hash=False)[0] if shared else None
    futures = [
        client.submit(_call_dask, fn, task, shared_future, pure=False) for task in tasks
    ]
    try:
        for future in as_completed(futures):
            if future.status == "error":
                future.result()  # re-raises the task's exception here
            bar.update(1)
        return client.gather(futures)
    finally:
        client.cancel(futures)


def _call_dask(fn, task, shared):
    return _call_locked(fn, task, shared or {})


def _is_dask_client(obj: Any) -> bool:
    return type(obj).__name__ == "Client" and type(obj).__module__.startswith("distributed")


def check_positive_int(value: object, name: str) -> int:
    """Return ``value`` as an int, or raise a ValueError naming ``name``.

    Examples
    --------
    >>> check_positive_int(3.0, "n_splits")
    3
    """
    if isinstance(value, bool) or int(value) != value or value < 1:
        raise ValueError(f"{name} must be a positive integer; got {value!r}.")
    return int(value)
