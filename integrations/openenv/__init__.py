"""PersuArena's OpenEnv environment folder (README.md); the server is the
Go binary that server/app.py runs."""
