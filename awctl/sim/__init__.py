"""Simulation: ``SimEnv`` (a world model behind the Environment contract), output parsing,
perturbation schedules, and the HTTP server (OpenAI-compatible + environment sessions).

Import the submodule you need; nothing here imports torch at module level.
"""
