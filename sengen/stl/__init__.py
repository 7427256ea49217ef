"""The STL front end: source text to a resolved model (docs/front-end.md)."""
