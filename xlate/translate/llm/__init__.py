"""The LLM translator: prompts from templates/prompts, completions through litellm, and a repair loop that
feeds compile errors and the verifier's counterexamples back until [verify] accepts a port.

Model output is untrusted: it is only ever handed as text to the backends (which compile and run it in worker
subprocesses) and never imported or executed in the xlate process; it never chooses a file path.
"""
