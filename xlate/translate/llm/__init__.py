"""The LLM translator: prompts from templates/prompts, completions through litellm, and a repair loop that
feeds compile errors and the verifier's counterexamples back until [verify] accepts a port.

Model output is untrusted (docs/security.md): it must pass an allow-list first (contract.py: pycheck.py,
ccheck.py, xlate/data/llm/allowlist.yaml); it is only ever handed as text to the backends, which build and run it inside the OS
sandbox (backends/sandbox.py) and never in the xlate process; only messages about its own lines go back to the
model (feedback.py); it never chooses a file path, and a port holding it is checked again before it is written.
"""
