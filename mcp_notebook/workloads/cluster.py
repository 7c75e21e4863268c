"""A load's sessions split over a Dask cluster's workers: each worker runs the same engine
(`engine.drive`) on its share, near the server, and streams its records back to the kernel.

The records travel in one `distributed.Queue` per load, in batches (a share sends what it
recorded every quarter second, with what its sessions' health said since, then a "done"
marker): a queue keeps the order each share sent in, so once a share's marker has arrived
every record it made has too, and each record travels once, so the merged report counts each
call (and each pong, each violation) once, and the live view shows the sessions' health as the
load runs, not as each share ends. (Futures' results alone would show nothing until a share
ends, and a stopped share's records would be lost with it; pub-sub drops what nobody was
subscribed to yet.) A `distributed.Event` tells every share to stop: Ctrl-C in
the kernel, or another share's error. Each share runs its sessions in the engine's
try/finally, so a stopped or failing share closes every session, and its server processes,
before it returns.

`distributed` is imported here only, with the first load asked to run on a cluster.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
import uuid
from collections.abc import Iterator, Mapping
from typing import Any

from ..base.errors import UsageError
from ..base.plural import counted
from .engine import STOP_GRACE, Engine, Plan, drive
from .records import Health, Tally
from .workload import Workload

POLL = 0.25  # seconds between a share's batches, and the kernel's looks at the stream
SCALE = "pip install 'mcp-notebook[scale]'"


def split(plan: Plan, workers: int) -> list[Plan]:
    """The plan's sessions, calls and rate shared out over `workers` as evenly as they go; a
    worker whose share is no session (or no call) gets none."""
    sizes = [plan.sessions // workers + (i < plan.sessions % workers) for i in range(workers)]
    budgets: list[int | None] = [None] * workers
    if plan.calls is not None:
        given = [plan.calls * size // plan.sessions for size in sizes]
        for i in range(plan.calls - sum(given)):
            given[i % workers] += 1
        budgets = list(given)
    shares, first = [], 0
    for size, budget in zip(sizes, budgets, strict=True):
        if size and budget != 0:
            rate = plan.rate * size / plan.sessions if plan.rate else None
            shares.append(dataclasses.replace(plan, sessions=size, first=first, calls=budget, rate=rate))
        first += size
    return shares


def run_share(target: Any, workload: Workload, plan: Plan, options: Mapping[str, Any], stream: str, stop: str) -> Health:
    """A worker's share (a Dask task): the engine on `plan`, its records sent to the queue `stream`
    as they come, stopped when the event `stop` is set; its sessions closed whatever happens."""
    from distributed import Event, Queue

    records, stopping = Queue(stream), Event(stop)
    tally = Tally()
    engine = Engine(target, workload, plan, options, tally)
    sent, open_now, told = 0, -1, Health()

    def forward() -> None:
        nonlocal sent, open_now, told
        if stopping.is_set():
            engine.stop("stopped by the kernel")
        batch = tally.since(sent)
        if batch:
            records.put(("calls", plan.first, batch))
            sent += len(batch)
        health = tally.health
        news = health.since(told)
        if news != Health():
            records.put(("health", plan.first, news))
            told = health
        if tally.sessions_open != open_now:
            open_now = tally.sessions_open
            records.put(("open", plan.first, open_now))

    try:
        drive(engine, forward, POLL)
    finally:
        records.put(("done", plan.first, None))
    return tally.health


def run_on(
    cluster: Any, processes: int | None, target: Any, workload: Workload, plan: Plan, options: Mapping[str, Any], tally: Tally
) -> tuple[str, str | None]:
    """Run the load on a cluster (a `distributed.Client` or a scheduler's address), or on a local
    cluster of `processes` workers made for it; the records land in `tally`. (where, why it stopped)."""
    with _client(cluster, processes) as client:
        workers = sorted(client.nthreads())
        if not workers:
            raise UsageError("load: the Dask cluster has no workers")
        return _run(client, workers, target, workload, plan, options, tally)


def _run(
    client: Any, workers: list[str], target: Any, workload: Workload, plan: Plan, options: Mapping[str, Any], tally: Tally
) -> tuple[str, str | None]:
    from distributed import Event, Queue, wait

    run = uuid.uuid4().hex[:12]
    stream, stop = Queue(f"mcp-notebook-load-{run}", client=client), Event(f"mcp-notebook-stop-{run}", client=client)
    shares = split(plan, len(workers))
    futures = {
        share.first: client.submit(
            run_share,
            target,
            workload,
            share,
            dict(options),
            stream.name,
            stop.name,
            key=f"mcp-notebook-load-{run}-{share.first}",
            workers=[worker],
            allow_other_workers=False,
            pure=False,
        )  # fmt: skip
        for share, worker in zip(shares, workers, strict=False)
    }
    where = f"{counted(len(futures), 'Dask worker')}"
    stopped: str | None = None
    pending, opened = set(futures), {first: 0 for first in futures}
    deadline: float | None = None
    try:
        while pending:
            try:
                running = [futures[f] for f in pending if not futures[f].done()]
                _take(stream, running, tally, pending, opened)
                for first in [f for f in pending if futures[f].status in ("error", "cancelled", "lost")]:
                    pending.discard(first)  # it died without its marker (a lost worker): what came is all there is
                    stop.set()
                if deadline is not None and time.monotonic() > deadline:
                    break
            except KeyboardInterrupt:
                if deadline is not None:
                    break  # a second Ctrl-C: stop waiting for the shares
                stopped, deadline = "Ctrl-C", time.monotonic() + STOP_GRACE
                stop.set()
    finally:
        if pending:
            stop.set()
            client.cancel([futures[f] for f in pending])
        else:  # every share sent its marker: its task is ending (its result, or its error, is on the way)
            with contextlib.suppress(TimeoutError, asyncio.TimeoutError):
                wait(list(futures.values()), timeout=STOP_GRACE)
        tally.sessions_open = 0
        with contextlib.suppress(Exception):
            stream.close()
    failure = next((f.exception() for f in futures.values() if f.status == "error"), None)
    if failure is not None and stopped is None:
        raise failure if isinstance(failure, UsageError) else UsageError(f"load: a Dask worker's share failed: {failure}")
    return where, stopped


def _take(stream: Any, running: list[Any], tally: Tally, pending: set[int], opened: dict[int, int]) -> None:
    """What the shares sent since the last look, after waiting up to POLL for a share to end."""
    from distributed import wait

    if running:
        with contextlib.suppress(TimeoutError, asyncio.TimeoutError):  # the same class from Python 3.11
            wait(running, timeout=POLL, return_when="FIRST_COMPLETED")
    for kind, first, payload in stream.get(batch=True):
        if kind == "calls":
            tally.add(payload)
        elif kind == "health":
            tally.note(payload)
        elif kind == "open":
            opened[first] = payload
            tally.sessions_open = sum(opened.values())
        elif kind == "done":
            pending.discard(first)


@contextlib.contextmanager
def _client(cluster: Any, processes: int | None) -> Iterator[Any]:
    """The client to run on: the one given; one of the scheduler at an address (closed after); or a
    local cluster of `processes` workers, bound to 127.0.0.1, made and closed for this load."""
    try:
        import distributed
    except ImportError:
        raise UsageError(f"load: running on Dask needs the distributed package: {SCALE}") from None
    if isinstance(cluster, distributed.Client):
        yield cluster
    elif isinstance(cluster, str):
        with distributed.Client(cluster, timeout=30) as client:
            yield client
    elif processes is not None:
        local = distributed.LocalCluster(
            n_workers=processes, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=":0"
        )
        with local, distributed.Client(local) as client:
            yield client
    else:
        raise UsageError(f"load: cluster= is a distributed.Client or a scheduler's address, not {type(cluster).__name__}")
