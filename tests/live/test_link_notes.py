"""--link: the summary says whether each phase filled the link, and where it did not, the
setting that would (hpcio/conditions_hint.py); the cap is set from the run's own figures, so
nothing here depends on how fast this machine is."""

from hpcio.live.console import link_notes
from hpcio.results import io as results_io
from hpcio.results.stats import headline_bandwidth_mib_s
from hpcio.spec.model import RunSpec


def _document(hpcio, tmp_path):
    out = tmp_path / "run.jsonl"
    done = hpcio("run", "--pattern", "mfmw", "--target", "memory://run", "--size-per-rank",
                 "4MiB", "--transfer", "1MiB", "--in-flight", "2", "-q", "--link", "1Gbit",
                 "-o", str(out))  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "link: write: " in done.stdout and "link: read: " in done.stdout
    (doc,) = results_io.read(out)
    return doc, RunSpec.from_dict(doc.run)


def test_a_phase_under_the_link_is_told_the_depth_that_fills_it(hpcio, tmp_path):
    doc, run = _document(hpcio, tmp_path)
    cap = 4 * headline_bandwidth_mib_s(doc, "write")
    write = next(n for n in link_notes(doc, run, cap) if "write:" in n)
    # A quarter of the cap with 2 in flight: 0.9 of it needs 8 (7.2 rounded up).
    assert "0.25 of the link" in write and "--in-flight 8 would" in write


def test_a_phase_that_fills_the_link_names_no_setting(hpcio, tmp_path):
    doc, run = _document(hpcio, tmp_path)
    cap = headline_bandwidth_mib_s(doc, "read")
    read = next(n for n in link_notes(doc, run, cap) if "read:" in n)
    assert "1.00 of the link" in read and "--in-flight" not in read
    assert "1 rank(s) x 2 in flight" in read
