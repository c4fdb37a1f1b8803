"""The read path: hybrid retrieval with fusion, bounded preference, rerank, receipts."""

from grounded.retrieve.service import Hit, Retriever, SearchRequest, SearchResult, clean_query

__all__ = ["Hit", "Retriever", "SearchRequest", "SearchResult", "clean_query"]
