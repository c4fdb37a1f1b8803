"""grounded: answers from an organisation's own documents, with verified citations."""

__version__ = "0.1.0"
