"""Data/plugin package installed as xlate.backends (see pyproject package-dir)."""
