"""The framework version, read by the build and reported in info and session records."""

__version__ = "0.1.0"
