"""`python -m eve_cli` runs the `eve` command."""

from eve_cli.main import main

main()
