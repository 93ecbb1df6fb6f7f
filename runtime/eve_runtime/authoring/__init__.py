"""The authoring API behind `eve_runtime`: what `define_agent`, `@tool` and the other `define_*` return.

Nothing here runs a session; these are the values an app's files define and the compiler reads.
Users import them from `eve_runtime` (and channels from `eve_runtime.channels`).
"""
