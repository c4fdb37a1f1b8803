"""Providers: one module each, chosen by name from the registry (``gateway.registry``)."""
