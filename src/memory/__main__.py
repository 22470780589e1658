"""`python -m memory ...` runs the ai-memory CLI."""

from memory.entrypoints.cli import main

raise SystemExit(main())
