"""Declared confidence labels (seed 000 ADR-016).

Labels are *writer declarations*, not probabilities: "verified" says a person
checked the statement against its source, "inferred" that it was derived,
"unverified" that nobody vouches for it. Ranking may prefer them only within
a bounded weight (see retrieve/), never absolutely.

Three kinds of value meet here:

* input labels (API, CLI): exactly ``verified``, ``inferred``, ``unverified``;
  anything else is refused;
* stored labels: whatever history holds. ``None``/empty (legacy, or omitted on
  add) is effectively ``inferred``; an unknown stored value is kept as it is
  and is effectively ``unverified``;
* effective labels: always one of the three, used for ranking and derivation.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final, Literal, get_args

from grounded.errors import InvalidInput

Label = Literal["verified", "inferred", "unverified"]
LABELS: Final[tuple[Label, ...]] = get_args(Label)

# Order for "minimum": unverified < inferred < verified.
_RANK: Final[dict[str, int]] = {"unverified": 0, "inferred": 1, "verified": 2}

# The signed confidence c of the preference formula final = B * (1 + w*c).
SIGN: Final[dict[Label, int]] = {"verified": 1, "inferred": 0, "unverified": -1}


def parse_input(value: str | None, *, field: str = "confidence") -> Label | None:
    """Validate a label arriving from a caller. ``None`` means omitted."""
    if value is None:
        return None
    if value not in _RANK:
        raise InvalidInput(
            f"{field} must be one of verified, inferred, unverified (got {value!r})",
            details={"field": field, "allowed": list(LABELS)},
        )
    return value  # type: ignore[return-value]


def effective(stored: str | None) -> Label:
    """The label a stored value stands for."""
    if stored is None or stored == "":
        return "inferred"
    if stored in _RANK:
        return stored  # type: ignore[return-value]
    return "unverified"


def minimum(labels: Iterable[Label]) -> Label:
    """The weakest of ``labels`` (unverified < inferred < verified)."""
    return min(labels, key=_RANK.__getitem__)


def derived(explicit: Label | None, input_labels: Iterable[str | None]) -> Label:
    """The label of a revision or generated summary.

    An explicit label wins. Otherwise: the minimum of ``inferred`` and the
    effective labels of the (validated, live) inputs, so a derivation can never
    claim more than "inferred", nor more than its weakest input.
    """
    if explicit is not None:
        return explicit
    return minimum(["inferred", *(effective(s) for s in input_labels)])


EXTRACTION_LABEL: Final[Label] = "unverified"
"""Generated extraction is unverified: no writer vouched for it."""
