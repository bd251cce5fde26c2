"""The ``server`` entry point of the environment folder (app.main)."""
