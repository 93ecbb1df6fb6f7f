"""The test suite (a package, so test modules import as `tests.*`)."""
