"""A Record behaves as the typing.NamedTuple of the same body: fields, defaults, methods, copies, errors."""

from __future__ import annotations

import copy
import pickle
from typing import NamedTuple

import pytest

from torch_install.records import Record


class Built(Record):
    """A build."""

    variant: str
    torch: str = "2.9.1"
    packages: tuple[str, ...] = ()

    def label(self) -> str:
        return f"{self.torch}+{self.variant}"


class Typed(NamedTuple):
    """A build."""

    variant: str
    torch: str = "2.9.1"
    packages: tuple[str, ...] = ()

    def label(self) -> str:
        return f"{self.torch}+{self.variant}"


@pytest.mark.parametrize("make", [
    lambda cls: cls("cu128"), lambda cls: cls("cpu", "2.8.0"), lambda cls: cls(variant="xpu", packages=("a",)),
    lambda cls: cls._make(["rocm6.4", "2.9.0", ()]), lambda cls: cls("cu128")._replace(torch="2.10.0"),
])
def test_a_record_is_the_named_tuple_of_its_body(make) -> None:  # noqa: ANN001
    record, typed = make(Built), make(Typed)
    assert tuple(record) == tuple(typed) and record == typed and hash(record) == hash(typed)
    assert repr(record) == repr(typed).replace("Typed(", "Built(")
    assert record._asdict() == typed._asdict() and record.label() == typed.label()
    assert [record.variant, record.torch, record.packages] == [typed.variant, typed.torch, typed.packages]
    assert pickle.loads(pickle.dumps(record)) == record and type(pickle.loads(pickle.dumps(record))) is Built
    assert copy.deepcopy(record) == record and copy.copy(record) is not None


def test_a_record_has_the_named_tuple_attributes() -> None:
    assert Built._fields == Typed._fields and Built._field_defaults == Typed._field_defaults
    assert Built.__match_args__ == Typed.__match_args__ and Built.__doc__ == "A build."
    assert Built.__slots__ == () and issubclass(Built, tuple) and Built.__module__ == __name__
    assert Built.__new__.__code__.co_varnames[:4] == ("_cls", "variant", "torch", "packages")
    with pytest.raises(AttributeError):
        Built("cpu").variant = "cu128"  # type: ignore[misc]


@pytest.mark.parametrize("call", [
    lambda cls: cls(), lambda cls: cls("a", "b", (), "extra"), lambda cls: cls("a", variant="b"),
    lambda cls: cls._make(["a"]), lambda cls: cls("a")._replace(missing=1),
])
def test_a_record_refuses_what_a_named_tuple_refuses(call) -> None:  # noqa: ANN001
    with pytest.raises((TypeError, ValueError)) as typed:
        call(Typed)
    with pytest.raises(typed.type):
        call(Built)


def test_a_field_without_a_default_after_one_with_a_default_is_an_error() -> None:
    with pytest.raises(TypeError, match="without a default"):
        class Bad(Record):  # noqa: F841
            first: int = 0
            second: int
