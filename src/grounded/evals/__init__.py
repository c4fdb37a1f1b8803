"""The evaluation harness: suites, isolated corpora, variants, metrics, reports, gates.

Public surface: ``load_suite`` (a suite file, BEIR directory or SQuAD JSON),
``RunOptions`` and ``run`` (one complete eval -> a report dict), ``write``
(JSON, Markdown and PNG), ``load_baseline``, and ``register`` for new
variants. Seed 001 ADR-011: suites are versioned files in ``evals/``.
"""

from grounded.evals.gates import load_baseline
from grounded.evals.harness import RunOptions, run
from grounded.evals.report import markdown, write
from grounded.evals.suite import load_suite
from grounded.evals.variants import Outcome, Variant, register

__all__ = [
    "Outcome",
    "RunOptions",
    "Variant",
    "load_baseline",
    "load_suite",
    "markdown",
    "register",
    "run",
    "write",
]
