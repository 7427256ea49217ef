"""The object layer (private): values and their codecs, metadata, objects with double-buffered
properties, proxies, events and calls. It imports nothing of the kernel or of components."""
