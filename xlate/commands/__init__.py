"""One module per CLI command; shared plumbing in `common`."""
