"""SIGTERM made the same clean interrupt as Ctrl-C, even while a call waits outside Python."""

import os
import signal
import threading

import pytest
from hpcio import _engine
from hpcio.runner import interrupts


def test_wait_for_gives_the_result_or_the_error():
    assert interrupts.wait_for(lambda: 42) == 42
    with pytest.raises(ValueError, match="bad"):
        interrupts.wait_for(lambda: (_ for _ in ()).throw(ValueError("bad")))


def test_sigterm_while_waiting_raises_interrupted_and_cancels_the_engine():
    saved = interrupts.install()
    released = threading.Event()
    try:
        threading.Timer(0.1, os.kill, (os.getpid(), signal.SIGTERM)).start()
        with pytest.raises(interrupts.Interrupted) as stopped:
            # Stands in for an engine phase: C code that does not return to Python by itself.
            interrupts.wait_for(lambda: released.wait(60), settle=True)
        assert stopped.value.exit_code == 143
        assert stopped.value.signal_name == "SIGTERM"
        # A second signal during clean-up is ignored, not a second interrupt.
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        released.set()
        interrupts.restore(saved)
        _engine.cancel(False)
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
