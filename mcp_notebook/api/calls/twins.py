"""A feature method written once, as steps, and given its two faces: blocking and awaited.

A feature's steps function takes the connection and the method's own parameters and yields
the `CallSpec`s it needs (`exchange`). `twin(steps)` makes from it the blocking method
(`conn.call_tool`: each request waited for in the caller's thread, `drive`) and its awaitable
twin (`conn.aio.call_tool`: awaited in the caller's coroutine, `adrive`), as a `Twin` of two
descriptors: `Connection` takes `.blocking` and `AsyncConnection` (`conn.aio`) takes
`.awaiting`, each under the same name. A feature module's list of `twin(...)` lines is its
table; the two classes compose the tables and write no method twice. `awaited(function)`
puts a coroutine function of the connection written by hand on the awaitable face the same way.

The rule kept here: each face is a real function with the steps' parameters (the connection
as `self`), name, docstring and return type, so `help()`, IPython's `?`, tab completion and
`inspect.signature` show what the caller may pass, and type checkers see the same signature
through the descriptors' `__get__`. The awaitable face reaches its connection as `_connection`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Coroutine
from types import MethodType
from typing import TYPE_CHECKING, Any, Concatenate, Generic, ParamSpec, Protocol, TypeVar, overload

from .exchange import Steps, adrive, drive

if TYPE_CHECKING:
    from .core import Featured

P = ParamSpec("P")
T = TypeVar("T")

AWAITED = "`{name}`, awaited: the caller's event loop keeps running, and cancelling the await cancels the request."


class Blocking(Generic[P, T]):
    """The blocking face of a feature method: runs its steps in the caller's thread."""

    def __init__(self, steps: Callable[Concatenate[Featured, P], Steps[T]]) -> None:
        def method(self: Featured, /, *args: Any, **kwargs: Any) -> Any:
            return drive(self._core, steps(self, *args, **kwargs))

        self.function = _dressed(method, steps, steps.__doc__)

    def __set_name__(self, owner: type, name: str) -> None:
        _named(self.function, owner, name)

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> Callable[Concatenate[Featured, P], T]: ...
    @overload
    def __get__(self, obj: Featured, owner: type | None = None) -> Callable[P, T]: ...
    def __get__(self, obj: Featured | None, owner: type | None = None) -> Callable[..., T]:
        return self.function if obj is None else MethodType(self.function, obj)


class Face(Protocol):
    """The awaitable face of a connection (`conn.aio`): what its methods need of it."""

    @property
    def _connection(self) -> Featured: ...


class Awaiting(Generic[P, T]):
    """The awaitable face of a feature method: awaits its steps in the caller's coroutine."""

    def __init__(self, steps: Callable[Concatenate[Featured, P], Steps[T]]) -> None:
        async def method(self: Face, /, *args: Any, **kwargs: Any) -> Any:
            conn = self._connection
            return await adrive(conn._core, steps(conn, *args, **kwargs))

        self.function = _dressed(method, steps, None)
        self.steps_doc = steps.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        _named(self.function, owner, name)
        self.function.__doc__ = AWAITED.format(name=name) + (f"\n\n{self.steps_doc}" if self.steps_doc else "")

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> Callable[Concatenate[Face, P], Coroutine[Any, Any, T]]: ...
    @overload
    def __get__(self, obj: Face, owner: type | None = None) -> Callable[P, Coroutine[Any, Any, T]]: ...
    def __get__(self, obj: Face | None, owner: type | None = None) -> Callable[..., Coroutine[Any, Any, T]]:
        return self.function if obj is None else MethodType(self.function, obj)


class Twin(Generic[P, T]):
    """A feature method's two faces: `Connection` takes `blocking`, `AsyncConnection` `awaiting`."""

    def __init__(self, steps: Callable[Concatenate[Featured, P], Steps[T]]) -> None:
        self.blocking = Blocking(steps)
        self.awaiting = Awaiting(steps)


def twin(steps: Callable[Concatenate[Featured, P], Steps[T]]) -> Twin[P, T]:
    """Both faces of the feature method `steps` describes (its docstring is the method's)."""
    return Twin(steps)


class awaited(Generic[P, T]):
    """A coroutine function of the connection, written by hand, as a method of the awaitable face
    (`set_roots = awaited(client_side.aset_roots)`): same parameters, its own docstring."""

    def __init__(self, function: Callable[Concatenate[Featured, P], Coroutine[Any, Any, T]]) -> None:
        async def method(self: Face, /, *args: Any, **kwargs: Any) -> Any:
            return await function(self._connection, *args, **kwargs)

        self.function = _dressed(method, function, function.__doc__)

    def __set_name__(self, owner: type, name: str) -> None:
        _named(self.function, owner, name)

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> Callable[Concatenate[Face, P], Coroutine[Any, Any, T]]: ...
    @overload
    def __get__(self, obj: Face, owner: type | None = None) -> Callable[P, Coroutine[Any, Any, T]]: ...
    def __get__(self, obj: Face | None, owner: type | None = None) -> Callable[..., Coroutine[Any, Any, T]]:
        return self.function if obj is None else MethodType(self.function, obj)


def _dressed(method: Callable[..., Any], steps: Callable[..., Any], doc: str | None) -> Callable[..., Any]:
    """`method` with the steps' signature (the connection as `self`, the steps' result as its return)."""
    signature = inspect.signature(steps)
    first, *rest = signature.parameters.values()
    returns = signature.return_annotation
    if isinstance(returns, str) and returns.startswith("Steps[") and returns.endswith("]"):
        returns = returns[len("Steps[") : -1]
    method.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[first.replace(name="self"), *rest], return_annotation=returns
    )
    method.__doc__ = doc
    method.__module__ = steps.__module__
    method.__name__ = method.__qualname__ = steps.__name__
    return method


def _named(function: Callable[..., Any], owner: type, name: str) -> None:
    function.__name__ = name
    function.__qualname__ = f"{owner.__qualname__}.{name}"
    function.__module__ = owner.__module__
