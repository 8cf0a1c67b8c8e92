"""Every public name is documented: numpydoc's validation over ``cudadml.__all__`` (skipped
without numpydoc, which the ``docs`` extra installs), and the benchmark JSON against the table
it was taken from.

Every numpydoc check applies, except:

* ES01 (an extended summary) and SA01 (a See Also section), which are optional here;
* PR01 for enumerations, whose signature is ``enum.Enum``'s functional API (``names``,
  ``module``, ...), not theirs to document: they document ``value``.

Beyond numpydoc's checks, every function and class has a Raises section, except the exception
classes, which are raised rather than raising.
"""

import enum
import json
import re
from pathlib import Path

import pytest

import cudadml

validate = pytest.importorskip("numpydoc.validate")
docscrape = pytest.importorskip("numpydoc.docscrape")

OPTIONAL = {"ES01", "SA01"}
ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", cudadml.__all__)
def test_public_names_have_numpydoc_docstrings(name):
    obj = getattr(cudadml, name)
    skip = OPTIONAL | ({"PR01"} if isinstance(obj, enum.EnumMeta) else set())
    errors = [f"{code}: {message}" for code, message in validate.validate(f"cudadml.{name}")["errors"]]
    assert [e for e in errors if e[:4] not in skip] == []
    if not (isinstance(obj, type) and issubclass(obj, Exception)):
        assert docscrape.get_doc_object(obj)["Raises"], f"{name} has no Raises section"


def test_the_api_reference_lists_every_public_name():
    listed = set(re.findall(r"^   (\w+)$", (ROOT / "docs" / "api.rst").read_text(), re.MULTILINE))
    assert set(cudadml.__all__) - listed == set()


def test_the_package_is_typed():
    assert (ROOT / "cudadml" / "py.typed").is_file()
    assert "py.typed" in (ROOT / "setup.cfg").read_text()


def test_the_benchmark_json_holds_the_table_it_was_taken_from():
    """Each large cudadml row of the JSON has the GPU time, whole call and %D2D of the README's
    table, as the table rounds them, and so has the ``--against`` revision's column (where
    that revision has the case's function)."""
    results = json.loads((ROOT / "benchmarks" / "results" / "h100.json").read_text())
    table = (ROOT / "benchmarks" / "README.md").read_text().split("\n| case | cudadml us | GB/s |")[1].split("\n\n")[0]
    header, _, *lines = table.splitlines()
    columns = ["case", "cudadml us", "GB/s", *(c.strip() for c in header.strip("|").split("|"))]
    against = next(c for c in columns if c.endswith(" %D2D") and c not in ("copy %D2D",))
    rows = {}
    for line in lines:
        cells = dict(zip(columns, (c.strip() for c in line.strip("|").split("|"))))
        rows[cells["case"]] = (
            float(cells["cudadml us"]),
            float(cells["whole call us"]),
            int(cells["%D2D"]),
            None if cells[against] == "-" else float(cells[against]),  # "-": the revision lacks the function
        )
    share = {(r["case"], r["participant"]): r["pct_d2d"] for r in results["rows"]}
    ours = {
        r["case"]: (
            round(r["gpu_us"], 1),
            round(r["whole_us"], 1),
            round(r["pct_d2d"]),
            round(share[key], 1) if (key := (r["case"], f"cudadml at {against.split()[0]}")) in share else None,
        )
        for r in results["rows"]
        if r["participant"] == "cudadml" and r["kind"] == "large"
    }
    assert ours == rows
    assert {r["participant"] for r in results["rows"]} == {
        "cudadml",
        "CuPy",
        "PyTorch",
        "copy",
        f"cudadml at {against.split()[0]}",
    }
