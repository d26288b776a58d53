"""Faults a desktop simulator can be asked to inject (added to the simulation instruction)."""

from __future__ import annotations

from awctl.domain import Perturbation

PERTURBATIONS: tuple[Perturbation, ...] = (
    Perturbation(
        "app_not_responding",
        "An application freezes.",
        "{app} stops responding: its windows keep showing exactly what they showed, clicks and keystrokes sent "
        "to it change nothing, and after the agent's next action a dialog of {app} titled "
        "'{app} is not responding' with the buttons 'Wait' and 'Force Quit' becomes the active window.",
        {"app": "mousepad"},
    ),
    Perturbation(
        "save_permission_denied",
        "Saving a file fails.",
        "Saving {path} fails: instead of the title losing its '*', an error dialog of the editor becomes active "
        "saying the file could not be saved because permission is denied, with an 'OK' button.",
        {"path": "~/notes.txt"},
    ),
    Perturbation(
        "window_crash",
        "An application crashes.",
        "On the agent's next action {app} crashes: its application node and all its windows disappear from the "
        "tree, and another open window becomes active.",
        {"app": "galculator"},
    ),
    Perturbation(
        "focus_stolen",
        "Another window takes the focus.",
        "Right after the agent's next action a notification window named '{title}' appears and becomes the "
        "active window, so later keystrokes go to it until the agent clicks elsewhere.",
        {"title": "Software Updates Available"},
    ),
    Perturbation(
        "slow_app",
        "An application is slow to react.",
        "{app} reacts late: for the next {turns} actions sent to it the tree still shows its previous state "
        "(the effect of each action appears one turn later).",
        {"app": "mousepad", "turns": 1},
    ),
    Perturbation(
        "missing_file",
        "A file disappears.",
        "The file {path} no longer exists: opening it shows an empty, unnamed-looking document or an error "
        "dialog saying it cannot be found.",
        {"path": "~/notes.txt"},
    ),
)
