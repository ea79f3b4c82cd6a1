"""The script that reads an interpreter's facts (run in the inspected Python, with nothing imported that it can
do without): its JSON and its version and platform readings agree with the standard library's."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from lanes import equivalence


@equivalence(300)
@given(st.recursive(st.none() | st.booleans() | st.text(), lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.text(max_size=5), inner, max_size=4), max_leaves=12))
def test_the_facts_script_writes_json_as_json_dumps_does(value: object) -> None:
    import json

    from torch_install.environment.interpreter_facts import to_json

    assert to_json(value) == json.dumps(value)


def test_the_facts_script_reads_the_version_and_platform_as_platform_does() -> None:
    import platform

    from torch_install.environment.interpreter_facts import _uname, _version

    assert _version() == platform.python_version().rstrip("+")
    assert _uname() == (platform.system(), platform.machine())
