"""``Record``: the base of the product's value types, ``typing.NamedTuple``'s class syntax at a third of its cost.

``class Gpu(Record): name: str; count: int = 1`` makes the same class ``typing.NamedTuple`` makes: a
``collections.namedtuple`` with the body's defaults, methods and docstring. What it leaves out is the check of
every field's annotation as the class is made (each annotation is a string here, which typing compiles into a
``ForwardRef``): two thirds of the cost of a class, and a plan makes about thirty before it starts. Type checkers
see ``typing.NamedTuple`` itself, so they check the annotations instead.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)

if TYPE_CHECKING:
    from typing import NamedTuple as Record
else:
    from collections import namedtuple

    class _RecordType(type):
        def __new__(mcs, name, bases, namespace):
            if not bases:  # Record itself
                return super().__new__(mcs, name, bases, namespace)
            annotations = namespace.get("__annotations__", {})
            defaults = [namespace[field] for field in annotations if field in namespace]
            if any(field not in namespace for field in list(annotations)[len(annotations) - len(defaults):]):
                raise TypeError(f"{name}: a field without a default follows one with a default")
            record = namedtuple(name, annotations, defaults=defaults, module=namespace["__module__"])
            record.__annotations__ = annotations
            for key, value in namespace.items():
                if key not in annotations and key not in ("__module__", "__annotations__"):
                    setattr(record, key, value)
            return record

    class Record(metaclass=_RecordType):
        """The base of a value type (see the module docstring)."""


__all__ = ["Record"]
