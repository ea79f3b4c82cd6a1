"""``Record``: the base of the product's value types, ``typing.NamedTuple``'s class syntax at a fraction of its cost.

``class Gpu(Record): name: str; count: int = 1`` makes a named tuple as ``typing.NamedTuple`` does: a tuple
subclass whose fields are read by name, with the body's defaults, methods and docstring, and ``_fields``,
``_field_defaults``, ``_make``, ``_replace`` and ``_asdict``. Making one costs a fifth of what typing's does
(a plan makes about thirty before it starts, an eighth of its CPU that way):

- typing checks every field's annotation as the class is made; here type checkers do that, since they see
  ``typing.NamedTuple`` itself;
- ``collections.namedtuple`` compiles a ``__new__`` for each class; here one is compiled per number of fields
  and given each class's field names (its code object renamed), and the other methods are shared.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import NamedTuple as Record
else:
    import sys
    from operator import itemgetter

    try:  # the field accessor collections.namedtuple uses (C); an itemgetter property elsewhere
        from _collections import _tuplegetter
    except ImportError:  # pragma: no cover (not CPython)
        def _tuplegetter(index, doc):
            return property(itemgetter(index), doc=doc)

    _NEW_BY_ARITY = {}  # number of fields -> a __new__ taking that many, its parameters named _0, _1, …

    def _new(name, fields, defaults):
        """A ``__new__(cls, <fields>)`` building the tuple: the template for the arity, its parameters renamed."""
        template = _NEW_BY_ARITY.get(len(fields))
        if template is None:
            params = ", ".join(f"_{i}" for i in range(len(fields)))
            namespace = {"_tuple_new": tuple.__new__}
            exec(f"def __new__(_cls, {params}): return _tuple_new(_cls, ({params}{',' if len(fields) == 1 else ''}))",
                 namespace)
            template = _NEW_BY_ARITY[len(fields)] = namespace["__new__"]
        renamed = {"co_qualname": f"{name}.__new__"} if sys.version_info >= (3, 11) else {}
        code = template.__code__.replace(co_varnames=("_cls", *fields), **renamed)
        return type(template)(code, template.__globals__, "__new__", tuple(defaults) or None)

    @classmethod
    def _make(cls, iterable):
        """Make a new instance from a sequence or iterable."""
        made = tuple.__new__(cls, iterable)
        if len(made) != len(cls._fields):
            raise TypeError(f"Expected {len(cls._fields)} arguments, got {len(made)}")
        return made

    def _replace(self, /, **changes):
        """A new instance with the named fields replaced."""
        made = self._make([changes.pop(name, value) for name, value in zip(self._fields, self, strict=True)])
        if changes:
            raise ValueError(f"Got unexpected field names: {list(changes)!r}")
        return made

    def _asdict(self):
        """A dict of the field names and their values."""
        return dict(zip(self._fields, self, strict=True))

    def _repr(self):
        return f"{type(self).__name__}({', '.join(f'{n}={v!r}' for n, v in zip(self._fields, self, strict=True))})"

    def _getnewargs(self):
        return tuple(self)

    _SHARED = {"_make": _make, "_replace": _replace, "_asdict": _asdict, "__repr__": _repr,
               "__getnewargs__": _getnewargs}
    _KEPT_OUT = frozenset({"__module__", "__qualname__", "__annotations__", "__dict__", "__weakref__"})

    class _RecordType(type):
        def __new__(mcs, name, bases, namespace):
            if not bases:  # Record itself
                return super().__new__(mcs, name, bases, namespace)
            annotations = namespace.get("__annotations__", {})
            fields = tuple(sys.intern(field) for field in annotations)
            defaults = [namespace[field] for field in fields if field in namespace]
            if any(field not in namespace for field in fields[len(fields) - len(defaults):]):
                raise TypeError(f"{name}: a field without a default follows one with a default")
            if any(field.startswith("_") or not field.isidentifier() for field in fields):
                raise ValueError(f"{name}: field names are identifiers that do not start with '_'")
            body = {"__slots__": (), "__module__": namespace["__module__"], "__qualname__": namespace["__qualname__"],
                    "__doc__": namespace.get("__doc__") or f"{name}({', '.join(fields)})",
                    "__annotations__": annotations, "__match_args__": fields, "_fields": fields,
                    "_field_defaults": dict(zip(fields[len(fields) - len(defaults):], defaults, strict=True)),
                    "__new__": _new(name, fields, defaults), **_SHARED}
            for index, field in enumerate(fields):
                body[field] = _tuplegetter(index, f"Alias for field number {index}")
            for key, value in namespace.items():
                if key not in fields and key not in _KEPT_OUT and key not in body:
                    body[key] = value
            return type(name, (tuple,), body)

    class Record(metaclass=_RecordType):
        """The base of a value type (see the module docstring)."""


__all__ = ["Record"]
