"""Smoke tests of the benchmarks under `bench/`."""
