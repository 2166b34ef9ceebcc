"""The suites and scenarios hpcio ships are package data, found by name (an installed wheel
has no checkout's suites/ beside it: scripts/wheel-check runs them from one)."""

from pathlib import Path

from hpcio import shipped

ROOT = Path(__file__).resolve().parents[2]


def test_the_checkout_s_directories_are_the_package_s():
    assert (ROOT / "suites").resolve() == shipped.SUITES
    assert (ROOT / "scenarios").resolve() == shipped.SCENARIOS
    assert shipped.names(shipped.SUITES) == sorted(p.stem for p in shipped.SUITES.glob("*.toml"))


def test_suite_list_names_every_shipped_suite_with_its_line(hpcio):
    done = hpcio("suite", "list")
    assert done.returncode == 0, done.stderr
    listed = {line.split()[0]: line for line in done.stdout.splitlines()[:-1]}
    assert set(listed) == set(shipped.names(shipped.SUITES))
    assert "N-1 and N-N writes" in listed["output"]


def test_a_shipped_suite_by_name(hpcio, tmp_path):
    done = hpcio("suite", "show", "output", "--scale", "small", "--target", f"file://{tmp_path}")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("output at scale small: 8 points")


def test_a_misspelt_suite_name_gets_the_closest(hpcio, error_line):
    done = hpcio("suite", "show", "outptu")
    assert done.returncode == 2
    assert error_line(done) == (
        "hpcio: error: no suite file 'outptu' and no shipped suite of that name; did you mean "
        "'output'?"
    )


def test_a_shipped_scenario_by_name(hpcio):
    done = hpcio("cost", "--scenario", "rtm")
    assert done.returncode == 0, done.stderr
    assert "RTM storage for a month" in done.stdout
