"""The transport's side of ``ps`` and of owners in ``info``: what the other processes are.

Each process declares a queryable ``sengen/v2/<identity>/@info`` that answers on request with its
:class:`ProcessInfo` as JSON (app, pid, host, run mode, components, object count). Asked with
the parameters ``bus`` and ``name`` (base64url), it also names the component that owns that
object. Nothing is sent per object or per cycle: a process pays only when someone asks. A
process known by its liveliness token that does not answer (an older version) is still listed,
with what its token says (app and pid).
"""

from __future__ import annotations

import base64
import logging
import threading
from collections.abc import Callable
from dataclasses import replace

import zenoh

from sengen.runtime import Object, RemoteProxy
from sengen.runtime.components.transport.handles import RemoteHandle
from sengen.runtime.components.transport.link import INFO_ANY, identity_in, info_key
from sengen.runtime.kernel.extension import Answer, ProcessInfo

_log = logging.getLogger("sengen.transport")

ASK_TIMEOUT = 1.0  # s: how long a question waits for the processes' answers


def _text(value: str) -> str:
    return base64.urlsafe_b64encode(value.encode()).decode().rstrip("=")


def _untext(value: str) -> str:
    return base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)).decode()


class Directory:
    """``me(component)``: this process (``component`` owning the object asked about);
    ``owner_of(bus, name)``: the local component owning an object; ``peers()``: the processes
    known by their tokens, as (zid, "app/pid", leaving)."""

    def __init__(
        self,
        session: zenoh.Session,
        zid: str,
        me: Callable[[str], ProcessInfo],
        owner_of: Callable[[str, str], str | None],
        peers: Callable[[], list[tuple[str, str, bool]]],
    ) -> None:
        self._session = session
        self._zid = zid
        self._me = me
        self._owner_of = owner_of
        self._peers = peers
        self.queryable = session.declare_queryable(info_key(zid), self._answer)

    def _answer(self, query: zenoh.Query) -> None:
        """A Zenoh thread: a malformed question is answered without an owner."""
        component = ""
        try:
            bus, name = query.parameters.get("bus"), query.parameters.get("name")
            if bus is not None and name is not None:
                component = self._owner_of(_untext(bus), _untext(name)) or ""
        except (ValueError, UnicodeDecodeError):
            pass
        try:
            query.reply(info_key(self._zid), self._me(component).encode())
        except zenoh.ZError:  # the asker or this session went meanwhile
            pass
        except Exception:  # a bug: logged, never raised into Zenoh's thread
            _log.exception("answering a question about this process")

    def ask_processes(self) -> Answer:
        answer = Answer()
        self._start(INFO_ANY, answer, everyone=True)
        return answer

    def ask_owner(self, obj: Object) -> Answer | None:
        handle = obj._endpoint_ if isinstance(obj, RemoteProxy) else None
        if not isinstance(handle, RemoteHandle):
            return None
        answer = Answer()
        selector = zenoh.Selector(
            info_key(handle.zid), {"bus": _text(handle.bus), "name": _text(handle.name)}
        )
        self._start(str(selector), answer, everyone=False)
        return answer

    def ask_named(self, bus: str, name: str) -> Answer:
        """Every process is asked; only the owners keep their answer (this one included)."""
        answer = Answer()
        selector = zenoh.Selector(INFO_ANY, {"bus": _text(bus), "name": _text(name)})
        self._start(str(selector), answer, everyone=False, mine=(bus, name))
        return answer

    def _start(
        self, selector: str, answer: Answer, everyone: bool, mine: tuple[str, str] | None = None
    ) -> None:
        # A thread per question: Zenoh's get blocks until every answer or the timeout.
        thread = threading.Thread(
            target=self._collect,
            args=(selector, answer, everyone, mine),
            name="sengen-ask",
            daemon=True,
        )
        thread.start()

    def _collect(
        self, selector: str, answer: Answer, everyone: bool, mine: tuple[str, str] | None
    ) -> None:
        found: dict[str, ProcessInfo] = {}
        try:
            for reply in self._session.get(selector, timeout=ASK_TIMEOUT):
                sample = reply.ok
                if sample is None:
                    continue
                zid = identity_in(str(sample.key_expr))
                info = ProcessInfo.decode(sample.payload.to_bytes())
                if info is not None and zid != self._zid:
                    found[zid] = info
        except zenoh.ZError:  # the session closed meanwhile: what came so far
            pass
        finally:
            if everyone:
                answer.processes = [self._me(""), *self._merge(found)]
            elif mine is not None:  # who owns a name: this process too, without the network
                owner = self._owner_of(*mine)
                here = [self._me(owner)] if owner is not None else []
                answer.processes = here + [i for i in found.values() if i.component]
            else:
                answer.processes = list(found.values())
            answer.done.set()

    def _merge(self, found: dict[str, ProcessInfo]) -> list[ProcessInfo]:
        """The answers, with the liveliness their tokens show, and the processes known only
        by their tokens; sorted by app and pid."""
        merged = dict(found)
        for zid, label, leaving in self._peers():
            state = "leaving" if leaving else "alive"
            known = merged.get(zid)
            if known is not None:
                merged[zid] = replace(known, liveliness=state)
                continue
            app, _, pid = label.rpartition("/")
            merged[zid] = ProcessInfo(app, int(pid) if pid.isdigit() else 0, liveliness=state)
        return sorted(merged.values(), key=lambda p: (p.app, p.pid))

    def close(self) -> None:
        self.queryable.undeclare()  # type: ignore[no-untyped-call]  # untyped in zenoh's stubs
