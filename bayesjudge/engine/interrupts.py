"""Ctrl-C during NUTS: samplers must let KeyboardInterrupt through, never return a result.

nutpie's blocking ``sample`` catches KeyboardInterrupt and returns the draws made so
far; PyMC's sequential sampler catches it, ends the chain and goes on to the next.
A fit would then end with NaN or empty posteriors (and the command line exit 0 with
a ranking of NaN skills). :func:`nutpie_sample` cancels nutpie and re-raises;
:func:`remembered` lets :func:`bayesjudge.engine.samplers.run_nuts` raise afterwards
whatever a sampler swallowed.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading

import xarray as xr


def nutpie_sample(compiled, **kwargs) -> xr.DataTree:
    """``nutpie.sample`` that lets Ctrl-C through.

    nutpie's blocking call catches KeyboardInterrupt and returns the draws made so far
    (none, or a partial warm-up): a fit would end with NaN or empty posteriors. Here the
    sampler is cancelled and the interrupt propagates.
    """
    from bayesjudge.engine.nutpie_import import import_nutpie

    background = import_nutpie().sample(compiled, blocking=False, **kwargs)
    try:
        return background.wait()
    except BaseException:
        background.cancel()
        raise


@contextlib.contextmanager
def remembered():
    """Remember a Ctrl-C (SIGINT) while sampling; yields an Event set by it.

    PyMC's sampler swallows KeyboardInterrupt (it ends the chain and returns the
    draws so far), so the fit asks this flag afterwards. Only the default handler
    (or a user's handler that raises KeyboardInterrupt) counts; an ignored SIGINT or
    a call outside the main thread leaves signals alone.
    """
    flag = threading.Event()
    main = threading.current_thread() is threading.main_thread()
    previous = signal.getsignal(signal.SIGINT) if main else None
    if not callable(previous):
        yield flag
        return

    resend: list[threading.Timer] = []

    def handler(signum, frame):
        if _in_foreign_callback(frame):
            # Raised here the interrupt would be printed as "Exception ignored on calling
            # ctypes callback function" and dropped (llvmlite calls Python back from C
            # while numba compiles). Remember it and deliver it again a moment later,
            # when Python code of ours or of the sampler runs.
            flag.set()
            timer = threading.Timer(RESEND_DELAY, os.kill, (os.getpid(), signum))
            timer.daemon = True
            resend.append(timer)
            timer.start()
            return
        try:
            previous(signum, frame)
        except KeyboardInterrupt:
            flag.set()
            raise

    signal.signal(signal.SIGINT, handler)
    try:
        yield flag
    finally:
        signal.signal(signal.SIGINT, previous)
        for timer in resend:
            timer.cancel()


#: Seconds before a SIGINT that arrived inside a foreign callback is sent again.
RESEND_DELAY = 0.05
#: Packages that call Python back from C through ctypes, where a raised exception is lost.
_FOREIGN_CALLERS = (f"{os.sep}llvmlite{os.sep}",)


def _in_foreign_callback(frame, depth: int = 64) -> bool:
    """Whether ``frame`` runs inside a package that calls Python back through ctypes.

    The whole package counts, not only its callbacks: delaying an interrupt there
    by :data:`RESEND_DELAY` costs nothing, missing a callback prints a traceback.
    """
    while frame is not None and depth > 0:
        if any(part in frame.f_code.co_filename for part in _FOREIGN_CALLERS):
            return True
        frame, depth = frame.f_back, depth - 1
    return False
