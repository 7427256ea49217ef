"""The recorder component and its file format (runtime.md §9)."""
