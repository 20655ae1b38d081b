"""Test-only interpreters: the AscendC emulator runs xlate's AscendC ports on NumPy so the tests can check what
the templates compute (never a verdict: nothing shipped uses it)."""
