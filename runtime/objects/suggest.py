""" "Did you mean" for a mistyped name: configuration keys, class, property and component names.

A leaf module (the standard library only) so that every layer above the object layer may use it;
components reach it through ``kernel.extension``.
"""

from __future__ import annotations

from collections.abc import Iterable

CUTOFF = 0.6  # difflib's own default: close enough for a typo, far enough to stay quiet


def same_but_case(word: str, candidates: Iterable[str]) -> str | None:
    """The candidate that differs from ``word`` only by case (``freqhz`` for ``freqHz``), None
    when there is none or ``word`` itself is a candidate."""
    names = list(candidates)
    if word in names:
        return None
    lowered = word.lower()
    return next((name for name in names if name.lower() == lowered), None)


def suggestion(word: str, candidates: Iterable[str], cutoff: float = CUTOFF) -> str | None:
    """The candidate ``word`` most likely meant: one differing only by case first, else the
    closest by :func:`difflib.get_close_matches`, compared case-insensitively (a mistake of case
    and a typo together is still a typo); None when nothing is close."""
    names = [name for name in dict.fromkeys(candidates) if name != word]
    exact = same_but_case(word, names)
    if exact is not None:
        return exact
    # Imported here: every generated module imports the object layer, and a suggestion is only
    # ever needed on the way to an error.
    import difflib

    by_lower: dict[str, str] = {}
    for name in names:
        by_lower.setdefault(name.lower(), name)
    close = difflib.get_close_matches(word.lower(), list(by_lower), n=1, cutoff=cutoff)
    return by_lower[close[0]] if close else None


def dotted_suggestion(word: str, candidates: Iterable[str], cutoff: float = CUTOFF) -> str | None:
    """As :func:`suggestion` for qualified names (``hello.CountingGreeter``): the last part is
    compared among the candidates of the same prefix, since a shared prefix would make any two
    names of one package look alike; the whole name only when no candidate shares the prefix."""
    names = list(dict.fromkeys(candidates))
    prefix, _, last = word.rpartition(".")
    siblings = {n.rpartition(".")[2]: n for n in names if n.rpartition(".")[0] == prefix}
    if siblings:
        found = suggestion(last, siblings, cutoff)
        return siblings[found] if found is not None else None
    return suggestion(word, names, cutoff)


def did_you_mean(
    word: str, candidates: Iterable[str], cutoff: float = CUTOFF, dotted: bool = False
) -> str:
    """`` (did you mean 'x'?)`` to append to a message about ``word``, or ``""``; ``dotted``
    for qualified names (see :func:`dotted_suggestion`)."""
    pick = dotted_suggestion if dotted else suggestion
    found = pick(word, candidates, cutoff)
    return f" (did you mean '{found}'?)" if found is not None else ""
