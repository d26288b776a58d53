"""Faults an Android simulator can be asked to inject (added to the simulation instruction).

Each instruction says how the fault appears *in the trajectory's own representation* (element list or
uiautomator dump, with the same header lines), so a perturbed episode still passes the format checks.
"""

from __future__ import annotations

from awctl.domain import Perturbation

PERTURBATIONS: tuple[Perturbation, ...] = (
    Perturbation(
        "system_dialog",
        "A system dialog covers the app.",
        "After the next action a system dialog appears on top of the app: title {title!r}, message {message!r} "
        "and one button {button!r}. The screen shows only the dialog's elements (android.widget.TextView for "
        "the texts, android.widget.Button for the button, package android, resource ids android:id/alertTitle, "
        "android:id/message, android:id/button1) centred on the screen; the foreground activity stays the "
        "app's. A tap on the button dismisses the dialog and the app's screen returns unchanged.",
        {"title": "Battery is low", "message": "15% remaining. Turn on Battery Saver?", "button": "OK"},
    ),
    Perturbation(
        "app_not_responding",
        "The app stops responding (ANR).",
        "The app {app!r} stops responding: after the next action the screen shows Android's ANR dialog "
        "(package android): the title \"{app} isn't responding\" and the buttons \"Close app\" "
        "(android:id/aerr_close) and \"Wait\" (android:id/aerr_wait). Foreground activity: the app's. \"Wait\" "
        "returns to the frozen app screen; \"Close app\" returns to the launcher.",
        {"app": "Notes"},
    ),
    Perturbation(
        "permission_prompt",
        "A runtime permission request appears.",
        "The next action makes the app request the {permission} permission: the screen shows the permission "
        "controller's dialog (package com.google.android.permissioncontroller, foreground activity "
        "com.google.android.permissioncontroller/com.android.permissioncontroller.permission.ui."
        "GrantPermissionsActivity) with the message \"Allow {app} to {purpose}?\" and the buttons "
        "\"While using the app\", \"Only this time\" and \"Don't allow\" (resource ids com.android."
        "permissioncontroller:id/permission_allow_foreground_only_button, ..._allow_one_time_button, "
        "..._deny_button). Any button closes the dialog and returns to the app.",
        {"permission": "CAMERA", "app": "Notes", "purpose": "take pictures and record video"},
    ),
    Perturbation(
        "slow_load",
        "The next screen loads slowly.",
        "The next screen is still loading when it is observed: it shows the new activity's toolbar and one "
        "android.widget.ProgressBar (resource id {progress_id!r}) where the content will be, and none of the "
        "content yet. The content appears after the agent's next wait or action.",
        {"progress_id": "android:id/progress"},
    ),
    Perturbation(
        "app_crash",
        "The app crashes.",
        "The next action crashes {app!r}: the screen shows Android's crash dialog (package android) with the "
        "title \"{app} keeps stopping\" and the buttons \"App info\" and \"Close app\"; the app's data since its "
        "last save is lost.",
        {"app": "Notes"},
    ),
    Perturbation(
        "keyboard_covers",
        "The on-screen keyboard hides the lower part of the app.",
        "While a text field has focus the keyboard covers the bottom {height} pixels: elements of the app "
        "below that line are not in the element list (or are cut at its top edge in a dump), and taps there "
        "land on the keyboard instead.",
        {"height": 900},
    ),
    Perturbation(
        "airplane_mode",
        "The device has no network.",
        "Airplane mode is on: apps that need the network show their offline state (e.g. a \"No internet "
        "connection\" message with a \"Retry\" button), and the Network & internet settings show Airplane mode "
        "switched on.",
        {},
    ),
)
