"""Data/plugin package installed as xlate.grammars (see pyproject package-dir)."""
