"""Data/plugin package installed as xlate.templates (see pyproject package-dir)."""
