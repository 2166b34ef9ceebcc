"""SIGTERM made the same clean interrupt as Ctrl-C, even while a call waits outside Python;
SIGUSR1 prints every thread's stack and never ends the process."""

import os
import signal
import subprocess
import sys
import threading
import time

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


#: A process that starts a thread for each wait, as a rank does for each MPI collective
#: (interrupts.wait_for), with hpcio's handlers installed: it prints "ready", then runs until
#: the file named by its argument exists.
_THREAD_CHURN = """
import os, sys
from hpcio.runner import interrupts
interrupts.install()
print("ready", flush=True)
while not os.path.exists(sys.argv[1]):
    interrupts.wait_for(lambda: sum(range(50)))
"""


def test_stacks_signal_prints_every_thread_and_never_kills(tmp_path):
    """SIGUSR1 300 times, while threads start and end: the process prints its stacks
    each time and goes on. faulthandler's own handler, which read the threads from C while
    they ran, crashed this process (SIGSEGV) within 3 to 39 signals (10 runs of 10)."""
    stacks, stop = tmp_path / "stderr", tmp_path / "stop"
    with stacks.open("w") as err:
        churn = subprocess.Popen([sys.executable, "-c", _THREAD_CHURN, str(stop)],
                                 stdout=subprocess.PIPE, stderr=err, text=True)  # fmt: skip
        assert churn.stdout is not None and churn.stdout.readline() == "ready\n"
        sent = 0
        while sent < 300 and churn.poll() is None:
            os.kill(churn.pid, interrupts.STACKS_SIGNAL)
            sent += 1
            time.sleep(0.001)
        stop.touch()
        assert churn.wait(timeout=60) == 0, stacks.read_text()[-2000:]
    said = stacks.read_text()
    assert sent == 300
    # Signals that come while one waits to be handled make one: no count is certain but 1.
    assert "Current thread" in said  # the main thread, which prints them
    assert "interrupts.py" in said and "in wait_for" in said
