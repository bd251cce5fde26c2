"""openai.types stand-in (see openai/__init__.py)."""
