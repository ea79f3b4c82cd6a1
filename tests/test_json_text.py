"""Indented JSON written by render/json_text.py is json.dumps(indent=N)'s, byte for byte: for any JSON value, for
records that hold what a separator could be mistaken for, and for the plan of a hashed lock."""

from __future__ import annotations

import json

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from lanes import equivalence
from torch_install.render.json_text import indented

_SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=8)
_KEYS = st.text(max_size=5) | st.integers() | st.booleans() | st.none() | st.floats(allow_nan=False)
_VALUES = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner)
                       | st.dictionaries(_KEYS, inner, max_size=4), max_leaves=16)
_RECORDS = st.lists(st.dictionaries(st.text(max_size=4), _SCALARS, max_size=4), max_size=5)


@equivalence(600)
@given(_VALUES, st.integers(0, 4))
@example([{"a": "},\x00{"}, {"b": "\x00"}], 2)
@example({"a": [{}, {"b": 1}, []]}, 1)
def test_any_value_is_written_as_json_dumps_writes_it(value: object, indent: int) -> None:
    assert indented(value, indent) == json.dumps(value, indent=indent)


@equivalence(300)
@given(_RECORDS, st.integers(0, 3))
def test_lists_of_records_are_written_as_json_dumps_writes_them(records: list[dict[str, object]], indent: int
                                                                ) -> None:
    assert indented({"records": records}, indent) == json.dumps({"records": records}, indent=indent)


def test_what_json_refuses_is_refused() -> None:
    for value in ({"a": object()}, {(1, 2): 0}, [{"a": {1, 2}}]):
        with pytest.raises(TypeError):
            indented(value)


def test_a_hashed_lock_plans_json_as_json_dumps_writes_it(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    from torch_install.cli import main

    lock = tmp_path / "requirements.txt"
    lock.write_text("".join(f"pkg-{i}==1.{i} \\\n    --hash=sha256:{i:064x}\n    # via -r requirements.in\n"
                            for i in range(50)))
    assert main(["plan", "--os", "linux", "--arch", "x86_64", "--python", "3.12", "-r", str(lock),
                 "--format", "json"]) in (0, 1)
    out = capsys.readouterr().out
    assert out == json.dumps(json.loads(out), indent=2) + "\n"
    assert len(json.loads(out)["request"]["requirements"]) == 50
