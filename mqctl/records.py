"""``@record``: mqctl's data classes, defined at a tenth of what ``dataclasses`` costs at start-up.

Every mqctl command starts in a new process, and a live ``consumerProgress -g`` defines 27 data
classes before it sends its first request (48 for a group without committed offsets). On
Python 3.11 ``@dataclass`` compiles six generated functions per class, ~1 ms each class:
a third of what a live call costs beyond bare start-up. ``@record`` gives the same classes (the
semantics of ``@dataclass`` for what mqctl uses: fields in annotation order, defaults,
``field(default_factory=..., compare=False)``, ``frozen``, ``slots``, ``__post_init__``,
``__eq__``/``__hash__``/``__repr__``/``__match_args__``, pickling of frozen slotted classes,
``replace``) with ONE compiled function per class (``__init__``; the rest is shared), so a class
costs ~0.2 ms in a new process, most of it that compile, and ~0.08 ms once ``mqctl.codecache``
keeps the compiled function across processes. Type checkers see a dataclass (PEP 681's
``dataclass_transform``).

Not supported (mqctl uses none of it; each raises or is simply absent): inheritance between
records, ``order``, ``InitVar``, ``KW_ONLY``, ``dataclasses.fields``/``asdict``.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter
from typing import TYPE_CHECKING, Any, TypeVar, overload

from mqctl.codecache import compiled

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:  # the marker means nothing at run time; typing_extensions is not imported for it

    def dataclass_transform(**_kwargs: Any) -> Callable[[Any], Any]:
        return lambda fn: fn


T = TypeVar("T")

_MISSING: Any = object()


class Field:
    """What ``field(...)`` declares for one attribute (read by ``@record``, then gone)."""

    __slots__ = ("default", "default_factory", "compare", "hashed", "shown")

    def __init__(
        self,
        default: Any,
        default_factory: Callable[[], Any] | None = None,
        compare: bool = True,
        hash: bool | None = None,  # noqa: A002 - the name dataclasses.field gives it
        repr: bool = True,  # noqa: A002
    ) -> None:
        self.default, self.default_factory, self.compare = default, default_factory, compare
        self.hashed = compare if hash is None else hash
        self.shown = repr


def field(
    *,
    default: Any = _MISSING,
    default_factory: Callable[[], Any] | None = None,
    compare: bool = True,
    hash: bool | None = None,  # noqa: A002 - dataclasses.field's names
    repr: bool = True,  # noqa: A002
) -> Any:
    """A field's default or default factory; whether it takes part in ``==``, in ``hash`` (as
    ``compare`` unless said) and in ``repr`` (``repr=False`` for a secret)."""
    if default is not _MISSING and default_factory is not None:
        raise ValueError("field() takes a default or a default_factory, not both")
    return Field(default, default_factory, compare, hash, repr)


class FrozenRecordError(AttributeError):
    """Assigning to (or deleting) a field of a frozen record."""


def _is_classvar(annotation: object) -> bool:
    text = annotation if isinstance(annotation, str) else getattr(annotation, "_name", "") or ""
    return text.startswith(("ClassVar", "typing.ClassVar", "t.ClassVar"))


def _fields(cls: type) -> list[tuple[str, Field]]:
    for base in cls.__mro__[1:]:
        if "__record_fields__" in base.__dict__:
            raise TypeError(f"{cls.__name__}: a record cannot inherit from a record ({base.__name__})")
    out: list[tuple[str, Field]] = []
    for name, annotation in cls.__dict__.get("__annotations__", {}).items():
        if _is_classvar(annotation):
            continue
        value = cls.__dict__.get(name, _MISSING)
        spec = value if isinstance(value, Field) else Field(value, None, True)
        if out and spec.default is _MISSING and spec.default_factory is None:
            if out[-1][1].default is not _MISSING or out[-1][1].default_factory is not None:
                raise TypeError(f"{cls.__name__}: non-default field {name!r} follows a default field")
        out.append((name, spec))
    return out


def _init_source(
    cls: type, fields: list[tuple[str, Field]], frozen: bool, slots: bool
) -> tuple[str, dict[str, Any]]:
    """The text of ``__init__`` and the names it refers to (defaults, factories, the setters).

    A frozen record cannot assign its fields (its ``__setattr__`` refuses): a slotted one stores
    each through its slot's own setter (``_s_NAME``, put into the names once the slots exist), any
    other one fills its ``__dict__`` in one call. Both take two thirds of the time of
    ``object.__setattr__`` per field, and a 1,000-group overview makes ~10 records per group."""
    env: dict[str, Any] = {"_MISSING": _MISSING}
    params, body = ["self"], []
    for name, spec in fields:
        if spec.default_factory is not None:
            env[f"_f_{name}"] = spec.default_factory
            params.append(f"{name}=_MISSING")
            body.append(f" if {name} is _MISSING: {name} = _f_{name}()")
        elif spec.default is not _MISSING:
            env[f"_d_{name}"] = spec.default
            params.append(f"{name}=_d_{name}")
        else:
            params.append(name)
        if not frozen:
            body.append(f" self.{name} = {name}")
        elif slots:
            body.append(f" _s_{name}(self, {name})")
    if frozen and not slots and fields:
        body.append(f" self.__dict__.update({', '.join(f'{n}={n}' for n, _ in fields)})")
    if "__post_init__" in cls.__dict__:
        body.append(" self.__post_init__()")
    return f"def __init__({', '.join(params)}) -> None:\n" + ("\n".join(body) or " pass"), env


def _key(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """The tuple of these fields' values (what ``==`` and ``hash`` compare, as @dataclass does)."""
    if len(names) > 1:
        return attrgetter(*names)
    return lambda o: tuple(getattr(o, n) for n in names)


def _methods(fields: list[tuple[str, Field]], frozen: bool) -> dict[str, Any]:
    """``__repr__``, ``__eq__``, ``__hash__``: shared code over the field names (nothing compiled)."""
    shown = tuple(n for n, spec in fields if spec.shown)
    eq_key, hash_key = (
        _key(tuple(n for n, s in fields if s.compare)),
        _key(tuple(n for n, s in fields if s.hashed)),
    )

    def __repr__(self: Any) -> str:
        inner = ", ".join(f"{n}={getattr(self, n)!r}" for n in shown)
        return f"{self.__class__.__qualname__}({inner})"

    def __eq__(self: Any, other: object) -> Any:
        if other.__class__ is self.__class__:
            return eq_key(self) == eq_key(other)
        return NotImplemented

    def __hash__(self: Any) -> int:
        return hash(hash_key(self))

    # mutable and comparable: unhashable, as @dataclass makes it
    return {"__repr__": __repr__, "__eq__": __eq__, "__hash__": __hash__ if frozen else None}


def _frozen_setattr(self: Any, name: str, value: Any) -> None:
    raise FrozenRecordError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: Any, name: str) -> None:
    raise FrozenRecordError(f"cannot delete field {name!r}")


def _restore(self: Any, state: list[Any]) -> None:
    for name, value in zip(self.__record_fields__, state):
        object.__setattr__(self, name, value)


def _slotted(cls: type, names: tuple[str, ...], frozen: bool) -> type:
    """The class again with ``__slots__`` (a class's slots are fixed when it is made)."""
    body = {k: v for k, v in cls.__dict__.items() if k not in names and k not in ("__dict__", "__weakref__")}
    body["__slots__"] = names
    if frozen:  # pickle and copy restore a slotted object through setattr, which a frozen one refuses
        body["__getstate__"] = lambda self: [getattr(self, n) for n in names]
        body["__setstate__"] = _restore
    new = type(cls)(cls.__name__, cls.__bases__, body)
    new.__qualname__ = cls.__qualname__
    return new


def _build(cls: type, frozen: bool, slots: bool) -> type:
    fields = _fields(cls)
    names = tuple(n for n, _ in fields)
    source, env = _init_source(cls, fields, frozen, slots)
    exec(compiled(source, cls.__module__), env)  # noqa: S102 - the text is built above from the class's own field names
    env["__init__"].__qualname__ = f"{cls.__qualname__}.__init__"
    for name, spec in fields:  # class attributes hold plain defaults, as dataclasses leaves them
        if not isinstance(cls.__dict__.get(name), Field):
            continue
        if spec.default is _MISSING:
            delattr(cls, name)
        else:
            setattr(cls, name, spec.default)
    added: dict[str, Any] = {"__record_fields__": names, "__match_args__": names, "__init__": env["__init__"]}
    added.update((k, v) for k, v in _methods(fields, frozen).items() if k not in cls.__dict__)
    if frozen:
        added.update(__setattr__=_frozen_setattr, __delattr__=_frozen_delattr)
    for attr, value in added.items():
        setattr(cls, attr, value)
    if not slots:
        return cls
    new = _slotted(cls, names, frozen)
    env.update((f"_s_{n}", new.__dict__[n].__set__) for n in names)  # the setters __init__ calls
    return new


@overload
def record(cls: type[T], /) -> type[T]: ...


@overload
def record(*, frozen: bool = False, slots: bool = False) -> Callable[[type[T]], type[T]]: ...


@dataclass_transform(field_specifiers=(field,))
def record(cls: type[T] | None = None, /, *, frozen: bool = False, slots: bool = False) -> Any:
    """Make ``cls`` a data class: ``@record`` or ``@record(frozen=True, slots=True)``."""
    if cls is None:
        return lambda c: _build(c, frozen, slots)
    return _build(cls, frozen, slots)


def replace(obj: T, /, **changes: Any) -> T:
    """A copy of the record ``obj`` with ``changes`` (checked and post-initialised like a new one)."""
    names: tuple[str, ...] = obj.__class__.__record_fields__  # type: ignore[attr-defined]
    values = {n: getattr(obj, n) for n in names}
    values.update(changes)
    return obj.__class__(**values)


def trusted(cls: type[T], values: dict[str, Any]) -> T:
    """A record of ``cls`` from ``values`` (every field, by name) WITHOUT ``__init__`` and
    ``__post_init__``: for a decoder that built each value itself, in a loop where the checks
    and copies of ``__post_init__`` would be most of the cost. Nothing is checked here."""
    obj = object.__new__(cls)
    if hasattr(obj, "__dict__"):
        obj.__dict__.update(values)
    else:
        for name, value in values.items():
            object.__setattr__(obj, name, value)
    return obj
