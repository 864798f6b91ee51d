"""`cached_property` without a lock: a fact computed on first read and kept in the instance.

Python 3.11's `functools.cached_property` takes one lock per property *for every instance* while
it computes: the Kafka intake thread and the producer's workers reading the run ids of different
events wait on each other, each wait a hand-over of the GIL (CPython issue 87634; 3.12 dropped
the lock). The facts cached here are pure functions of an event's parse: two threads reading
one at once at worst compute it twice, and keep equal values.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

T = TypeVar("T")


class _Cached(Generic[T]):
    """A non-data descriptor: once set in the instance's `__dict__`, that value is read
    directly (this `__get__` is not called again)."""

    def __init__(self, func: Callable[[Any], T]) -> None:
        self.func = func
        self.name = func.__name__
        self.__doc__ = func.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> _Cached[T]: ...

    @overload
    def __get__(self, instance: object, owner: type | None = None) -> T: ...

    def __get__(self, instance: object, owner: type | None = None) -> T | _Cached[T]:
        if instance is None:
            return self
        value = self.func(instance)
        instance.__dict__[self.name] = value
        return value


if TYPE_CHECKING:
    from functools import cached_property as cached_property
else:
    cached_property = _Cached
