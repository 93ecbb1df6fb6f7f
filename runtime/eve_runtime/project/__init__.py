"""An app folder in, a manifest out: paths, discovery, loading user code, compiling, and agent info.

Discovery reads the folder without importing user code; the loader imports it by path, per
generation; the compiler turns both into a `Manifest` plus the runtime objects of each agent.
"""
