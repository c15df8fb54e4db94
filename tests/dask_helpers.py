"""A killed worker for the Dask tests (test_dask, test_dask_factorised), importable beside conftest.py's fixtures."""
import os
import signal
import time


def worker_killer(client, keys=None, after=2):
    """A fit callback that SIGKILLs, at sweep index `after`, the worker process holding the most results no other worker
    holds (of `keys`, if given: a copy elsewhere is not lost); `killed` receives (pid, the lost keys, time.time())."""
    killed = []
    def callback(it, q, bound):
        if it != after: return
        pids, has = client.run(os.getpid), client.has_what()
        def alone(w):
            return {k for k in has.get(w, ()) if (keys is None or k in keys)
                    and not any(k in held for v, held in has.items() if v != w)}
        victim = max(pids, key=lambda w: len(alone(w)))
        killed.append((pids[victim], alone(victim), time.time()))
        os.kill(pids[victim], signal.SIGKILL)
    return callback, killed


def recomputed_since(client, when):
    "The keys the scheduler brought back into memory after `when` (a time.time())."
    def recomputed(dask_scheduler):
        return {t[0] for t in dask_scheduler.transition_log if t[2] == 'memory' and t[-1] > when}
    return client.run_on_scheduler(recomputed)
