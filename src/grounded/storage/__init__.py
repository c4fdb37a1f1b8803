"""The raw zone: original bytes, content-addressed, per tenant."""

from grounded.storage.blobs import BlobRef, BlobStore

__all__ = ["BlobRef", "BlobStore"]
