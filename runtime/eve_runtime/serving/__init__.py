"""Serving an app from one process: `serve()`, the dev loop's reloader, worlds and the dev-server record."""
