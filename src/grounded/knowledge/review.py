"""The review workflow of knowledge items (seed 002 ADR-006).

    draft --submit--> pending --verify--> verified
                        |  ^                 |
                 reject |  | revise/submit   | revise (body or basis changed)
                        v  |                 v
                      rejected            pending

Changing the body or the basis of a non-draft item returns it to ``pending``:
a verification vouches for a specific text and basis, not for its successor.
Verifying needs a source link, a capture time, the verifier and a note.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Final, Literal, get_args

from grounded.errors import Conflict, InvalidInput

State = Literal["draft", "pending", "verified", "rejected"]
STATES: Final[tuple[State, ...]] = get_args(State)
Action = Literal["submit", "verify", "reject"]
ACTIONS: Final[tuple[Action, ...]] = get_args(Action)

_TRANSITIONS: Final[dict[tuple[State, Action], State]] = {
    ("draft", "submit"): "pending",
    ("rejected", "submit"): "pending",
    ("pending", "verify"): "verified",
    ("pending", "reject"): "rejected",
}


@dataclass(frozen=True)
class ReviewInput:
    action: Action
    note: str | None = None
    source_link: str | None = None
    captured_at: datetime | None = None


def next_state(current: State, review: ReviewInput) -> State:
    """The state after ``review``, or Conflict when the action is not allowed now."""
    target = _TRANSITIONS.get((current, review.action))
    if target is None:
        allowed = sorted(a for (s, a) in _TRANSITIONS if s == current)
        raise Conflict(
            f"cannot {review.action} an item that is {current}",
            details={"state": current, "allowed_actions": allowed},
        )
    if review.action == "verify":
        missing = [
            name
            for name, value in (
                ("source_link", review.source_link),
                ("captured_at", review.captured_at),
                ("note", review.note),
            )
            if value is None or (isinstance(value, str) and not value.strip())
        ]
        if missing:
            raise InvalidInput(
                f"verifying needs {', '.join(missing)}",
                details={"fields": missing},
            )
    if review.action == "reject" and not (review.note and review.note.strip()):
        raise InvalidInput("rejecting needs a note", details={"fields": ["note"]})
    return target


def after_content_change(current: State) -> State:
    """State after the body or basis changed: back to review unless still a draft."""
    return "draft" if current == "draft" else "pending"
