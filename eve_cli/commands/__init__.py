"""One module per `eve` command."""
