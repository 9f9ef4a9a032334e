"""Watch events: a ring buffer of recent events per resource type, and live subscribers.

A watch started at `resourceVersion=N` gets the buffered events after N, then live ones, as
the API server's watch cache serves them. If events after N have already left the buffer,
the watch can no longer be resumed there: it gets one `ERROR` event with a 410 `Expired`
Status, which kube-runtime's watcher (and client-go's reflector) answer by listing again.
Without a resourceVersion (or with "0"), the watch starts with a synthetic ADDED per
existing object.

The buffer has a fixed size, so memory and the cost of a resumed watch stay bounded however
long the emulator runs.
"""
import asyncio
from collections import deque
from dataclasses import dataclass, field
from typing import Callable

DEFAULT_CAPACITY = 1000


@dataclass
class Event:
    rv: int
    type: str            # ADDED, MODIFIED, DELETED
    obj: dict            # never mutated once stored (see store.py)
    # For label-selector watches: an object that stops matching looks DELETED to the
    # watcher, as the API server's watch cache does. The previous state tells.
    old: dict | None = None


@dataclass(eq=False)   # kept in a set, by identity
class Subscriber:
    matches: Callable[[dict], bool]
    queue: asyncio.Queue = field(default_factory=asyncio.Queue)


class Channel:
    """The events of one resource type (all namespaces)."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY):
        self.buffer: deque[Event] = deque(maxlen=capacity)
        # The resourceVersion of the newest event that fell out of the buffer: a watch from
        # an older version would miss it.
        self.evicted_rv = 0
        self.subscribers: set[Subscriber] = set()

    def publish(self, event: Event):
        if len(self.buffer) == self.buffer.maxlen:
            self.evicted_rv = self.buffer[0].rv
        self.buffer.append(event)
        for s in self.subscribers:
            s.queue.put_nowait(event)

    def can_resume(self, rv: int) -> bool:
        return rv >= self.evicted_rv

    def since(self, rv: int) -> list[Event]:
        """Buffered events after `rv`, oldest first (a scan of the bounded buffer only)."""
        return [e for e in self.buffer if e.rv > rv]

    def subscribe(self, matches) -> Subscriber:
        s = Subscriber(matches)
        self.subscribers.add(s)
        return s

    def unsubscribe(self, s: Subscriber):
        self.subscribers.discard(s)


def as_seen(event: Event, matches) -> str | None:
    """The event type a watcher with filter `matches` sees, or None if it sees nothing: an
    object that starts matching is ADDED, one that stops matching is DELETED."""
    now = matches(event.obj)
    if event.type == 'MODIFIED' and event.old is not None:
        before = matches(event.old)
        if now and not before:
            return 'ADDED'
        if before and not now:
            return 'DELETED'
    return event.type if now else None
