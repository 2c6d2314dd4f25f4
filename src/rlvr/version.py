"""The package's version: a leaf module, so that any layer may name it without importing
the package's public face."""

__version__ = "0.1.0"
