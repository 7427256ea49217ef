"""The transport component: remote objects across processes over Zenoh (runtime.md §8)."""
