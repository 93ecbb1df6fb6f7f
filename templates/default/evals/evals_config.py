"""The app's eval settings: `eve eval` needs this file (the judge model, concurrency, timeouts)."""

from eve_runtime import define_eval_config

config = define_eval_config(max_concurrency=4, timeout_ms=60_000)
