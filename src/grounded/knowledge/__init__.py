"""Curated knowledge: sources, documents (with versions), reviewed items, history.

Public surface: the three services and their records, the event log reader,
and the confidence and review rules. Tables stay behind these.
"""

from grounded.knowledge.confidence import LABELS, Label
from grounded.knowledge.documents import Document, Documents, DocumentVersion, check_groups
from grounded.knowledge.history import Event, list_events
from grounded.knowledge.items import ItemFilter, KnowledgeItem, KnowledgeItems, NewItem
from grounded.knowledge.paging import Page
from grounded.knowledge.review import ReviewInput
from grounded.knowledge.sources import Source, Sources

__all__ = [
    "LABELS",
    "Document",
    "DocumentVersion",
    "Documents",
    "Event",
    "ItemFilter",
    "KnowledgeItem",
    "KnowledgeItems",
    "Label",
    "NewItem",
    "Page",
    "ReviewInput",
    "Source",
    "Sources",
    "check_groups",
    "list_events",
]
