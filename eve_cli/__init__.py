"""The `eve` command line: thin typer commands over `eve_runtime`."""
