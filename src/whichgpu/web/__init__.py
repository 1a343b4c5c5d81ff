"""The web app and REST API: presentation only, over the same Python API as the CLI."""
