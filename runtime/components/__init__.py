"""The components sengen ships (private). Each is a plugin registered under the
``sengen.components`` entry-point group, like a third-party component, and uses only the
kernel's extension interface; none imports another."""
