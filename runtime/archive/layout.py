"""How a sengen archive lays its records out in an MCAP file (runtime.md §9.2): the profile, the
channels and their metadata, the metadata records. The writer and the reader share these names
and nothing else.

* one **state channel** per recorded object: topic = its address ``session/bus/object``, schema =
  its class's JSON Schema (named after the class), metadata = ``sengen.kind`` only, messages =
  its properties (all of them when it is added, the changed ones after each commit);
* one **event channel** per object and event: topic ``session/bus/object/Event``, metadata =
  ``sengen.kind``, ``address``, ``class``, ``event``;
* the **lifecycle channels** ``/sengen/added`` and ``/sengen/removed``: ``{"address", "class"}``;
  an addition is followed, at the same time, by the object's full state on its state channel;
* the **keyframe channel** ``/sengen/keyframe``: every ``keyframePeriod``, the full state of every
  recorded object, ``{"objects": {address: {"class", "values"}}}``, holding the state before the
  records of its own time;
* the metadata record ``sengen`` (name, selections, keyframe period, format version) and one
  ``sengen.type`` record per recorded class (``class``, ``description``: the class's STL type
  description, :func:`sengen.runtime.objects.describe.describe`).

Every message's log and publish time is the commit time of what it records, in integer ns.
"""

from __future__ import annotations

from typing import Final

from sengen.runtime.errors import SengenError

PROFILE: Final = "sengen"
LIBRARY: Final = "sengen"
FORMAT_VERSION: Final = "1"
MESSAGE_ENCODING: Final = "json"
SCHEMA_ENCODING: Final = "jsonschema"

ADDED_TOPIC: Final = "/sengen/added"
REMOVED_TOPIC: Final = "/sengen/removed"
KEYFRAME_TOPIC: Final = "/sengen/keyframe"

#: The ``sengen.kind`` metadata of each channel.
STATE: Final = "state"
EVENT: Final = "event"
ADDED: Final = "added"
REMOVED: Final = "removed"
KEYFRAME: Final = "keyframe"

INFO_METADATA: Final = "sengen"
TYPE_METADATA: Final = "sengen.type"

#: The record kinds a reader yields, in the order ``record info`` lists them.
KINDS: Final = (ADDED, STATE, EVENT, REMOVED)

COMPRESSIONS: Final = ("zstd", "lz4", "none")


class ArchiveError(SengenError, ValueError):
    """An archive that cannot be written or read; the message is one line naming the file."""
