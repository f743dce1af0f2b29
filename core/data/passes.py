"""Every pass over a folder's rows (core.data.folder): a Dask task per block of rows, the tasks' few results returned
in block order, so memory is a few blocks per worker whatever n. The local scheduler (threads, one per core) is the
default; a scheduler's address (tcp://host:8786) runs the same tasks on a dask.distributed cluster, whose workers must
read the same folder. core.estimator.blocks runs the fit's and the private stages' passes through `map_blocks`; the
data layer's own pass, the response's distinct values that choose the loss, runs here.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Callable
from typing import TypeVar

import numpy as np
from numpy.typing import NDArray

from core.data.folder import Folder
from core.errors import DataError, InputError

Array = NDArray[np.float64]
T = TypeVar("T")
CONNECT_SECONDS = 10  # how long a scheduler may take to answer
# How every message names the cluster: by its setting, never its address, which may be a mistyped secret and which
# names a deployment's internal host to whoever reads the page.
NAMED = "the Dask scheduler of --scheduler (PSP_SCHEDULER in the app)"
SCHEDULER = re.compile(r"(tcp|tls)://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9][A-Za-z0-9.-]*):[0-9]{1,5}")


def check_scheduler(address: object, where: str = "--scheduler") -> str | None:
    """A dask.distributed scheduler's address, tcp:// or tls:// host and port (None: this machine's cores);
    InputError naming where it was set otherwise, without quoting it (a deployment's setting may be a mistyped
    secret)."""
    if address is None or (isinstance(address, str) and SCHEDULER.fullmatch(address)):
        return address
    raise InputError(f"{where} must be a scheduler's address such as tcp://host:8786 (tcp:// or tls://, a host and a "
                     "port)")


def _run(folder: Folder, start: int, stop: int, features: bool, task: Callable[[Array, Array], T]) -> T:
    return task(*folder.read(start, stop, features))


def map_blocks(folder: Folder, ranges: list[tuple[int, int]], scheduler: str | None,
               task: Callable[[Array, Array], T], features: bool = True) -> list[T]:
    """task(X, y) on the rows [a, b) of each range (X of no columns when not `features`), as Dask tasks, in order;
    DataError in one sentence when the cluster fails during the pass."""
    import dask

    run = dask.delayed(_run, pure=False)
    tasks = [run(folder, a, b, features, task) for a, b in ranges]
    if scheduler is None:
        return list(dask.compute(*tasks, scheduler="threads", num_workers=os.cpu_count() or 1))
    client = _client(scheduler)
    try:
        return list(dask.compute(*tasks, scheduler=client))
    except DataError:
        raise
    except (Exception, asyncio.CancelledError) as e:  # a scheduler or worker lost during the pass
        raise DataError(f"the cluster of {NAMED} failed during a pass ({type(e).__name__}); nothing was "
                        "released: check that its scheduler and workers run and import this project (start them from "
                        "its folder, or with it on PYTHONPATH), or drop the setting to run on this machine") from None


_CLIENTS: dict[str, object] = {}


def _client(address: str) -> object:
    """A client of the dask.distributed scheduler at address, kept for the process while it runs; DataError if none
    answers."""
    from distributed import Client

    client = _CLIENTS.get(address)
    if client is not None and client.status == "running":  # type: ignore[attr-defined]
        return client
    try:
        client = Client(address, timeout=f"{CONNECT_SECONDS}s", set_as_default=False)
    except (OSError, TimeoutError, ValueError) as e:
        raise DataError(f"{NAMED} did not answer within {CONNECT_SECONDS} s ({type(e).__name__}); start it, or drop "
                        "the setting to run on this machine") from None
    try:  # a scheduler without workers would hold every pass for ever
        client.wait_for_workers(1, timeout=CONNECT_SECONDS)
    except (OSError, TimeoutError):
        client.close()
        raise DataError(f"{NAMED} has no worker after {CONNECT_SECONDS} s; start its workers, or drop the setting to "
                        "run on this machine") from None
    _CLIENTS[address] = client
    return client


def block_ranges(n: int, block_rows: int) -> list[tuple[int, int]]:
    """Blocks of block_rows rows, the last one the rest (whatever the files: a block may span two)."""
    cuts = [k * block_rows for k in range(max(1, n // block_rows))] + [n]
    return list(zip(cuts[:-1], cuts[1:], strict=True))


def response_values(folder: Folder, block_rows: int, scheduler: str | None = None) -> Array:
    """The distinct values of the response, at most three of them (enough to choose and check the loss), from one pass
    over its column; DataError if one is not finite."""
    found = map_blocks(folder, block_ranges(folder.n, block_rows), scheduler, _few_values, features=False)
    if any(values is None for values in found):
        raise DataError(f"the response {folder.response} contains NaN or infinite values; remove or impute those rows")
    return np.unique(np.concatenate(found))[:3]


def _few_values(X: Array, y: Array) -> Array | None:
    return np.unique(y)[:3] if np.all(np.isfinite(y)) else None


def binary_labels(values: Array, loss: str | None, response: str) -> None:
    """Refuse the logistic loss for a response of more than two values (response_values keeps three at most, so the
    message cannot give the count as the in-memory one does)."""
    if loss == "logistic" and values.size > 2:
        raise DataError(f"the label {response} takes more than two values, but the logistic loss needs binary labels; "
                        f"recode {response} into two values (such as 0 and 1) or pass {{loss}} robust", "loss")
