"""The transport's secure mode: certificates checked at start (``certificates``), the permissions
file (``permissions``), both turned into Zenoh's TLS and access-control settings (``access``),
and the member-level rules sengen enforces at the owner (``guard``). ``settings`` is the
``security:`` key of the transport's configuration, which loads the rest.
"""
