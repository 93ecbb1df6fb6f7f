"""The session actor and what it runs: turns, steps, model calls, tools, people in the loop, recovery.

Helpers take narrow ports (`eve_runtime.engine.ports`), never the whole actor.
"""
